"""Laying a best-worst survey out as HITs.

Per context, its responses from the chosen systems are split into balanced tuples of
`survey.tuple_size` (`tuples.balanced_tuples`: each response in about as many tuples, pairs meeting
about equally often), each tuple one item (`HITItem.Kind.BWS`, its response ids in shown order in
`tuple_responses`). A HIT holds `contexts_per_hit` contexts' tuples, each context a block under its
conversation, then `attention_checks_per_hit` gold tuples: real replies of a context off this HIT
(when there is one) with a broken reply planted at a drawn place, which an attentive annotator
picks as the worst. The broken reply is a null entry of `tuple_responses`, its text in `broken_text`.
"""

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.bws.tuples import balanced_tuples
from annotation.kinds.pairwise.layout import BROKEN_REPLIES
from annotation.models import HIT, HITItem, Response, System

# A tuple needs three replies at least: with two, best and worst are one choice (a pairwise task).
MIN_TUPLE = 3


def _responses(survey):
    """`{context id: [response id, ...]}` of the chosen systems (all of the dataset's by default)."""
    systems = survey.systems.all()
    if not systems.exists():
        systems = System.objects.filter(dataset=survey.dataset)
    by_context = {}
    rows = Response.objects.filter(context__dataset=survey.dataset, system__in=systems).order_by("pk")
    for response_id, context_id in rows.values_list("pk", "context_id"):
        by_context.setdefault(context_id, []).append(response_id)
    return by_context


def bws_plan(survey, contexts):
    """`{context id: [[response id, ...] per tuple]}` for the contexts with at least three replies."""
    by_context = _responses(survey)
    plan = {}
    for context_id in contexts:
        responses = by_context.get(context_id, [])
        if len(responses) >= MIN_TUPLE:
            plan[context_id] = balanced_tuples(responses, survey.tuple_size, seeded_rng(survey, f"tuples{context_id}"))
    return plan


def _gold_item(hit, position, plan, chunk, rng):
    """A tuple of a context off this HIT (else one of it) with one member replaced by a broken reply."""
    others = [pk for pk in plan if pk not in chunk]
    context_id = rng.choice(others or list(chunk))
    members = list(rng.choice(plan[context_id]))
    members[rng.randrange(len(members))] = None
    return HITItem(
        hit=hit,
        position=position,
        kind=HITItem.Kind.BWS_GOLD,
        context_id=context_id,
        tuple_responses=members,
        broken_text=rng.choice(BROKEN_REPLIES),
    )


def bws_layout(*, survey, contexts):
    """The survey's HITs and their tuple items, saved."""
    if survey.tuple_size < MIN_TUPLE:
        raise HITLayoutError(f"A best-worst tuple shows at least {MIN_TUPLE} replies.")
    plan = bws_plan(survey, contexts)
    ordered = [pk for pk in contexts if pk in plan]
    if not ordered:
        raise HITLayoutError(
            f"No context has replies from {MIN_TUPLE} of the chosen systems: there is nothing to scale."
        )
    seeded_rng(survey, "layout").shuffle(ordered)
    size = survey.contexts_per_hit
    chunks = [ordered[i : i + size] for i in range(0, len(ordered), size)]
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items = []
    for hit, chunk in zip(hits, chunks, strict=True):
        rng = seeded_rng(survey, f"hit{hit.position}")
        hit_items = [
            HITItem(hit=hit, position=0, kind=HITItem.Kind.BWS, context_id=context_id, tuple_responses=members)
            for context_id in chunk
            for members in plan[context_id]
        ]
        for _ in range(survey.attention_checks_per_hit):
            # between blocks, never inside one: a block is one context's tuples
            starts = [n for n in range(1, len(hit_items)) if hit_items[n].context_id != hit_items[n - 1].context_id]
            gold = _gold_item(hit, 0, plan, chunk, rng)
            hit_items.insert(rng.choice([*starts, len(hit_items)]), gold)
        for position, item in enumerate(hit_items):
            item.position = position
        items.extend(hit_items)
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits
