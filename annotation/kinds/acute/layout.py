"""Laying an ACUTE-Eval survey out as HITs: pairs of conversations of two different systems,
`contexts_per_hit` pairs a HIT, in a seeded order, each side drawn at random (left is
`conversation`, recorded on the item), and `attention_checks_per_hit` checks, alternating a check
pair and a repeat (as the pairwise kind's).

Pairs: conversations sharing a `seed` (the same persona, topic or opening) are compared with each
other, one pair per two systems of a seed; conversations without a seed are paired across systems
at random. A check pair shows a real conversation beside a clearly broken copy of it (each bot turn
replaced by one stock non-answer, the same every time), on a random side: a careful annotator
prefers the real one. The real side comes from another HIT where the survey has one.

A repeat shows one of the HIT's pairs again, sides swapped, later on the page and never right
after it (ACUTE-Eval's self-consistency: the same choice of bot on the main question should come
back mirrored). It is the same markup as any pair; its answer is stored as a check
(`answers.acute_rows`), never as a judgement, and an inconsistent one is reported, not punished:
a close pair may honestly go either way.
"""

import itertools

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.conversation.layout import chunk_by_turns, survey_conversations, turn_counts
from annotation.models import HIT, Conversation, HITItem

BROKEN_TEXT = "i dont know i dont know i dont know"


def conversation_pairs(survey, rng):
    """`[(left id, right id)]` of conversations of different systems, sides drawn at random (balanced)."""
    rows = Conversation.objects.filter(pk__in=survey_conversations(survey)).order_by("position")
    by_seed, unseeded = {}, {}
    for pk, system_id, seed in rows.values_list("pk", "system_id", "seed"):
        if seed:
            by_seed.setdefault(seed, {}).setdefault(system_id, []).append(pk)
        else:
            unseeded.setdefault(system_id, []).append(pk)
    pairs = []
    for seed in sorted(by_seed):
        systems = by_seed[seed]
        for a, b in itertools.combinations(sorted(systems), 2):
            pairs.append((systems[a][0], systems[b][0]))
    for a, b in itertools.combinations(sorted(unseeded), 2):
        left, right = list(unseeded[a]), list(unseeded[b])
        rng.shuffle(left)
        rng.shuffle(right)
        pairs += list(zip(left, right, strict=False))
    # Sides drawn at random but balanced: half the pairs keep their order, half are swapped, in a
    # shuffled order, so each system of a pair of systems is on the left about as often (a coin per
    # pair could put one system on the left in every pair, and position bias would then pass as a
    # system difference).
    swapped = [i % 2 == 1 for i in range(len(pairs))]
    rng.shuffle(swapped)
    return [pair[::-1] if swap else pair for pair, swap in zip(pairs, swapped, strict=True)]


def acute_layout(*, survey, contexts=()):
    rng = seeded_rng(survey, "layout")
    pairs = conversation_pairs(survey, rng)
    if not pairs:
        raise HITLayoutError(
            f"Dataset {survey.dataset.name!r} has no two conversations of different systems to compare."
        )
    rng.shuffle(pairs)
    every = sorted({pk for pair in pairs for pk in pair})
    counts = turn_counts(every)  # a HIT's pairs hold at most so many turns (conversation.layout's budget)
    chunks = chunk_by_turns(
        pairs, lambda pair: counts.get(pair[0], 0) + counts.get(pair[1], 0), survey.contexts_per_hit
    )
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items, repeats = [], []
    for hit, chunk in zip(hits, chunks, strict=True):
        hit_rng = seeded_rng(survey, f"hit{hit.position}")
        members = [
            {"kind": HITItem.Kind.CONV_PAIR, "conversation_id": left, "conversation_b_id": right}
            for left, right in chunk
        ]
        n_checks = survey.attention_checks_per_hit
        n_repeats = min(n_checks // 2, len(chunk))  # checks alternate: a check pair, then a repeat
        on_hit = {pk for pair in chunk for pk in pair}
        pool = [pk for pk in every if pk not in on_hit] or every
        for real in hit_rng.sample(pool, min(n_checks - n_repeats, len(pool))):
            gold = {
                "kind": HITItem.Kind.CONV_PAIR_GOLD,
                "conversation_id": real,
                "instructed_score": hit_rng.randint(0, 1),
                "broken_text": BROKEN_TEXT,
            }
            members.insert(hit_rng.randint(1, len(members)), gold)
        # a pair with something after it, so one item at least stands between it and its repeat
        originals = [m for m in members[:-1] if m["kind"] == HITItem.Kind.CONV_PAIR]
        originals = originals or [m for m in members if m["kind"] == HITItem.Kind.CONV_PAIR]
        for original in hit_rng.sample(originals, min(n_repeats, len(originals))):
            repeat = {
                "kind": HITItem.Kind.CONV_PAIR_REPEAT,
                "conversation_id": original["conversation_b_id"],
                "conversation_b_id": original["conversation_id"],
                "repeat_of": original,
            }
            after = members.index(original) + 2  # not right after it: one pair between at least
            members.insert(hit_rng.randint(after, len(members)) if after <= len(members) else len(members), repeat)
        hit_items = []
        for position, member in enumerate(members):
            fields = {k: v for k, v in member.items() if k != "repeat_of"}
            hit_items.append(HITItem(hit=hit, position=position, **fields))
        for member, item in zip(members, hit_items, strict=True):
            if "repeat_of" in member:
                repeats.append((item, hit_items[members.index(member["repeat_of"])]))
        items += hit_items
    HITItem.objects.bulk_create(items, batch_size=1000)
    for repeat, original in repeats:
        repeat.repeat_of_id = original.pk
    HITItem.objects.bulk_update([repeat for repeat, _ in repeats], ["repeat_of"], batch_size=1000)
    return hits
