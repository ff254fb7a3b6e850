"""Laying a pairwise (A/B) survey out as HITs.

Per HIT: `contexts_per_hit` contexts, each with its planned pairs (`annotation.kinds.pairwise.pairing`: every
pair, or a balanced budget; sides chosen so each system is as often left as right), then
`attention_checks_per_hit` checks, alternating a gold pair (a real reply against an obviously
broken one: choosing the broken one fails) and a repeat of one of the HIT's pairs with its sides
swapped (the answer should mirror the first). Overlap contexts are not used: every pair is judged
by `assignments_per_hit` annotators, which is what agreement needs.

A check is shown in a block shaped as a real one. Alone, it was a one-pair block under a
conversation already shown above, among blocks of one pair per system pair: "the lone block is
the check" let a careless annotator read there only. So:

- A gold pair is shown under a conversation borrowed from a context off this HIT (and off its other
  checks), its real reply one of that context's replies (a reply's text belongs to its own
  conversation), among filler pairs: real pairs of that context's plan, sides drawn, as many as
  make the block as large as one of the HIT's real blocks, the gold pair at a drawn place. When
  every context with pairs is on this HIT, it joins a real block of its own context instead (one
  pair larger, but no lone block under a conversation shown twice).
- A repeat keeps its conversation (its judgement depends on it), so a conversation is shown twice:
  that is what a test-retest check is. The least telling layout is the conversation's real block
  again: every one of its pairs with sides swapped, in a new order, one of them the scored repeat
  and the others fillers. The block is a real block's size and markup, and every pair in it was
  seen above and is shown swapped, so nothing tells which one is scored; a careless annotator has
  to answer the whole block consistently. It follows its real block and never touches it (the page
  would merge two neighbouring blocks of one conversation); a second repeat of the same conversation
  turns one of that block's fillers into a repeat rather than show the conversation a third time.

Filler pairs (`kind="pair_filler"`) are answered, required and checked like a real pair
(`answers`) and never stored: a borrowed context's pairs are judged on their own HIT, a
repeated conversation's on this one; kept, they would count twice in agreement, the Bradley-Terry
ranking and the exports. The page marks none of them (same markup as any pair; item ids in page
order).

The survey's `reference_pairs` adds the dataset's reference pseudo-system (`annotation.services.
references`) as a side: `also` as one more system in every pair plan, `only` as the one opponent of
every chosen system. Its response is the context's reference, shown like any other reply.
"""

from annotation.kinds.base import HITLayoutError, layout_seed, seeded_rng
from annotation.kinds.pairwise.pairing import PairPlanner
from annotation.kinds.pairwise.references import reference_system_ensure
from annotation.models import HIT, HITItem, Response, Survey, System

# Random draws of a context to borrow for a gold pair before the candidates are filtered in full.
DRAWS = 20

# Replies no attentive reader prefers to a real one (the gold pair's broken side).
BROKEN_REPLIES = (
    "asdf asdf asdf asdf",
    "the the the the the the the the",
    "lorem ipsum dolor sit amet consectetur",
    "... ... ... ...",
    "banana keyboard purple seventeen",
)


def _responses(survey):
    """`({context: {system: response}}, chosen system ids, reference system id or None)`."""
    systems = survey.systems.all()
    if not systems.exists():
        systems = System.objects.filter(dataset=survey.dataset)
    system_ids = sorted(systems.values_list("pk", flat=True))
    reference = None
    if survey.reference_pairs != Survey.ReferencePairs.NONE:
        reference = reference_system_ensure(dataset=survey.dataset).pk
    by_context = {}
    # with_references: the default manager leaves the reference pseudo-system's responses out.
    rows = Response.with_references.filter(
        context__dataset=survey.dataset, system__in=[*system_ids, *filter(None, [reference])]
    ).order_by("context__position")
    for response_id, context_id, system_id in rows.values_list("pk", "context_id", "system_id"):
        by_context.setdefault(context_id, {})[system_id] = response_id
    return by_context, system_ids, reference


def pairwise_plan(survey, contexts, rng_seed):
    """`{context_id: [(left_response_id, right_response_id), ...]}` for the contexts that have pairs."""
    by_context, systems, reference = _responses(survey)
    if survey.reference_pairs == Survey.ReferencePairs.ONLY:
        planner = PairPlanner(systems, budget=survey.pair_budget, seed=rng_seed, anchor=reference)
    else:
        planner = PairPlanner([*systems, *filter(None, [reference])], budget=survey.pair_budget, seed=rng_seed)
    plan = {}
    for context_id in contexts:
        responses = by_context.get(context_id, {})
        pairs = planner.pairs_for(responses)
        if pairs:
            plan[context_id] = [(responses[left], responses[right]) for left, right in pairs]
    return plan


def _sided(pair, rng):
    left, right = pair
    return (left, right) if rng.random() < 0.5 else (right, left)


def _borrowed_context(plan, need, excluded, rng, contexts):
    """A context off this HIT (and off its other checks) with at least `need` planned pairs, else
    the one with most; None when every context with pairs is shown on this HIT already.
    `contexts`: the plan's contexts as a list, made once per layout."""
    # A few random draws first: filtering every context for every HIT grows with their product.
    for _ in range(min(DRAWS, len(contexts))):
        context_id = rng.choice(contexts)
        if context_id not in excluded and len(plan[context_id]) >= need:
            return context_id
    candidates = [pk for pk in contexts if pk not in excluded]
    if not candidates:
        return None
    enough = [pk for pk in candidates if len(plan[pk]) >= need]
    if enough:
        return rng.choice(enough)
    return max(candidates, key=lambda pk: (len(plan[pk]), pk))


def _gold_block(plan, blocks, shown, rng, contexts):
    """A gold pair among filler pairs under a borrowed conversation, as a new block; or, when no
    conversation is left to borrow, the gold pair inside a real block of its own context (None)."""
    size = len(plan[rng.choice(blocks)[0][1]])
    context_id = _borrowed_context(plan, size - 1, shown, rng, contexts)
    if context_id is None:
        block = rng.choice(blocks)
        context_id = block[0][1]
        replies = sorted({reply for pair in plan[context_id] for reply in pair})
        block.insert(rng.randint(0, len(block)), ("gold", context_id, _gold_sides(rng.choice(replies), rng)))
        return None
    shown.add(context_id)
    pairs = plan[context_id]
    replies = sorted({reply for pair in pairs for reply in pair})
    members = [("filler", context_id, _sided(pair, rng)) for pair in rng.sample(pairs, min(size - 1, len(pairs)))]
    members.insert(rng.randint(0, len(members)), ("gold", context_id, _gold_sides(rng.choice(replies), rng)))
    return members


def _gold_sides(good, rng):
    return (None, good) if rng.random() < 0.5 else (good, None)


def _repeat_place(blocks, context_id, after_only=False):
    """Where a repeat block under `context_id` goes: after that context's real block and next to no
    block under the same conversation (the page would merge them), else anywhere it is next to
    none, else (a HIT of one context) right after it."""
    own = [n for n, block in enumerate(blocks) if block[0][1] == context_id]

    def apart(index):
        return all(blocks[n][0][1] != context_id for n in (index - 1, index) if 0 <= n < len(blocks))

    after = [index for index in range(own[0] + 1, len(blocks) + 1) if apart(index)]
    if after_only:
        return after
    anywhere = [index for index in range(1, len(blocks) + 1) if apart(index)]
    return after or anywhere or [own[-1] + 1]


def pairwise_hit_items(*, survey, hit, chunk, plan, rng, contexts=None):
    """The HIT's items for one chunk, unsaved: `(items, repeats)`, the repeats apart (each with the
    plan entry it repeats), as they can point at the pair they repeat only once that is saved.
    `contexts`: `list(plan)`, when the caller lays out many HITs with one plan."""
    contexts = list(plan) if contexts is None else contexts
    blocks = [[("pair", context_id, pair) for pair in plan[context_id]] for context_id in chunk]
    rng.shuffle(blocks)
    regular = [entry for block in blocks for entry in block]
    real_blocks = list(blocks)
    shown = set(chunk)
    repeat_blocks = {}  # context id: its repeat block
    repeated = set()
    for n in range(survey.attention_checks_per_hit if regular else 0):
        fresh = [entry for entry in regular if entry not in repeated]
        if n % 2 == 0 or not fresh:
            members = _gold_block(plan, real_blocks, shown, rng, contexts)
            if members is not None:
                blocks.insert(rng.randint(1, len(blocks)), members)
            continue
        # Preferably a pair of a conversation not repeated yet (each repeat block is one more
        # conversation shown twice) whose repeat block can follow its real block.
        new = [entry for entry in fresh if entry[1] not in repeat_blocks]
        placeable = {c for c in {entry[1] for entry in new} if _repeat_place(blocks, c, after_only=True)}
        later = [entry for entry in new if entry[1] in placeable]
        original = rng.choice(later or new or fresh)
        repeated.add(original)
        context_id = original[1]
        if context_id not in repeat_blocks:
            # The conversation's real block again, every pair's sides swapped and in a new order:
            # the repeat is one of them, the others fillers, so none tells which one is scored.
            own = next(block for block in real_blocks if block[0][1] == context_id)
            members = [("filler", context_id, (right, left)) for kind, _, (left, right) in own if kind == "pair"]
            rng.shuffle(members)
            repeat_blocks[context_id] = members
            blocks.insert(rng.choice(_repeat_place(blocks, context_id)), members)
        members = repeat_blocks[context_id]
        members[members.index(("filler", context_id, original[2][::-1]))] = ("repeat", context_id, original)
    items, repeats = [], []
    position = 0
    for block in blocks:
        for kind, context_id, value in block:
            if kind in ("pair", "filler"):
                item = HITItem(
                    hit=hit,
                    position=position,
                    kind=HITItem.Kind.PAIR if kind == "pair" else HITItem.Kind.PAIR_FILLER,
                    context_id=context_id,
                    response_id=value[0],
                    response_b_id=value[1],
                )
                if kind == "pair":
                    item.plan_entry = (kind, context_id, value)
            elif kind == "gold":
                item = HITItem(
                    hit=hit,
                    position=position,
                    kind=HITItem.Kind.PAIR_GOLD,
                    context_id=context_id,
                    response_id=value[0],
                    response_b_id=value[1],
                    broken_text=rng.choice(BROKEN_REPLIES),
                )
            else:
                _, _, (left, right) = value
                item = HITItem(
                    hit=hit,
                    position=position,
                    kind=HITItem.Kind.PAIR_REPEAT,
                    context_id=context_id,
                    response_id=right,
                    response_b_id=left,
                )
                repeats.append((item, value))
            position += 1
            if kind != "repeat":
                items.append(item)
    return items, repeats


def link_repeats(items, repeats):
    """Point each repeat at the saved item it repeats (same context, sides swapped)."""
    by_plan = {getattr(item, "plan_entry", None): item for item in items}
    for repeat, original in repeats:
        repeat.repeat_of_id = by_plan[original].pk
    return [repeat for repeat, _ in repeats]


def pairwise_layout(*, survey, contexts):
    """The survey's HITs and items: each context's planned pairs, repeats linked to what they repeat."""
    plan = pairwise_plan(survey, contexts, layout_seed(survey, "pairs"))
    contexts = [pk for pk in contexts if pk in plan]
    if not contexts:
        raise HITLayoutError("No context has replies from two of the chosen systems: there is nothing to compare.")
    seeded_rng(survey, "layout").shuffle(contexts)
    size = survey.contexts_per_hit
    chunks = [contexts[i : i + size] for i in range(0, len(contexts), size)]
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    borrowable = list(plan)  # the contexts a check may borrow, once for every HIT
    for hit, chunk in zip(hits, chunks, strict=True):
        items, repeats = pairwise_hit_items(
            survey=survey,
            hit=hit,
            chunk=chunk,
            plan=plan,
            rng=seeded_rng(survey, f"hit{hit.position}"),
            contexts=borrowable,
        )
        # Saved in page order, repeats included, and only then pointed at the pairs they repeat:
        # saved last, a repeat's id was the highest of its HIT, and the page's field names
        # (score-<id>-...) showed which pair in the middle of the page was the check.
        in_order = sorted([*items, *(repeat for repeat, _ in repeats)], key=lambda item: item.position)
        HITItem.objects.bulk_create(in_order, batch_size=1000)
        HITItem.objects.bulk_update(link_repeats(items, repeats), ["repeat_of"])
    return hits
