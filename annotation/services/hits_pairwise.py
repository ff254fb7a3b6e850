"""Laying a pairwise (A/B) survey out as HITs.

Per HIT: `contexts_per_hit` contexts, each with its planned pairs (`annotation.pairing`: every
pair, or a balanced budget; sides chosen so each system is as often left as right), then
`attention_checks_per_hit` checks at seeded places between contexts, alternating a gold pair (a
real reply against an obviously broken one: choosing the broken one fails) and a repeat of one of
the HIT's pairs with its sides swapped (the answer should mirror the first). Overlap contexts are
not used: every pair is judged by `assignments_per_hit` annotators, which is what agreement needs.

The survey's `reference_pairs` adds the dataset's reference pseudo-system (`annotation.services.
references`) as a side: `also` as one more system in every pair plan, `only` as the one opponent of
every chosen system. Its response is the context's reference, shown like any other reply.
"""

from annotation.models import HITItem, Response, Survey, System
from annotation.pairing import PairPlanner
from annotation.services.references import reference_system_ensure

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


def pairwise_hit_items(*, survey, hit, chunk, plan, rng):
    """The HIT's items for one chunk, unsaved: `(items, repeats)`, the repeats apart (each with the
    plan entry it repeats), as they can point at the pair they repeat only once that is saved."""
    blocks = [[("pair", context_id, pair) for pair in plan[context_id]] for context_id in chunk]
    rng.shuffle(blocks)
    n_checks = survey.attention_checks_per_hit
    regular = [entry for block in blocks for entry in block]
    for n in range(n_checks if regular else 0):
        if n % 2 == 0:
            context_id, (left, right) = rng.choice(regular)[1:]
            good = rng.choice((left, right))
            broken_left = rng.random() < 0.5
            check = ("gold", context_id, (None, good) if broken_left else (good, None))
        else:
            original = rng.choice(regular)
            check = ("repeat", original[1], original)
        blocks.insert(rng.randint(1, len(blocks)), [check])
    items, repeats = [], []
    position = 0
    for block in blocks:
        for kind, context_id, value in block:
            if kind == "pair":
                item = HITItem(
                    hit=hit,
                    position=position,
                    kind=HITItem.Kind.PAIR,
                    context_id=context_id,
                    response_id=value[0],
                    response_b_id=value[1],
                )
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
