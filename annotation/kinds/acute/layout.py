"""Laying an ACUTE-Eval survey out as HITs: pairs of conversations of two different systems,
`contexts_per_hit` pairs a HIT, in a seeded order, each side drawn at random (left is
`conversation`, recorded on the item), and `attention_checks_per_hit` check pairs.

Pairs: conversations sharing a `seed` (the same persona, topic or opening) are compared with each
other, one pair per two systems of a seed; conversations without a seed are paired across systems
at random. A check pair shows a real conversation beside a clearly broken copy of it (each bot turn
replaced by one stock non-answer, the same every time), on a random side: a careful annotator
prefers the real one. The real side comes from another HIT where the survey has one.
"""

import itertools

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.conversation.layout import survey_conversations
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
    size = survey.contexts_per_hit
    chunks = [pairs[i : i + size] for i in range(0, len(pairs), size)]
    every = sorted({pk for pair in pairs for pk in pair})
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items = []
    for hit, chunk in zip(hits, chunks, strict=True):
        hit_rng = seeded_rng(survey, f"hit{hit.position}")
        members = [
            {"kind": HITItem.Kind.CONV_PAIR, "conversation_id": left, "conversation_b_id": right}
            for left, right in chunk
        ]
        on_hit = {pk for pair in chunk for pk in pair}
        pool = [pk for pk in every if pk not in on_hit] or every
        for real in hit_rng.sample(pool, min(survey.attention_checks_per_hit, len(pool))):
            gold = {
                "kind": HITItem.Kind.CONV_PAIR_GOLD,
                "conversation_id": real,
                "instructed_score": hit_rng.randint(0, 1),
                "broken_text": BROKEN_TEXT,
            }
            members.insert(hit_rng.randint(1, len(members)), gold)
        items += [HITItem(hit=hit, position=position, **member) for position, member in enumerate(members)]
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits
