"""Laying a best-worst survey out as HITs.

Per context, its responses from the chosen systems are split into balanced tuples of
`survey.tuple_size` (`tuples.balanced_tuples`: each response in about as many tuples, pairs meeting
about equally often), each tuple one item (`HITItem.Kind.BWS`, its response ids in shown order in
`tuple_responses`). A HIT holds `contexts_per_hit` contexts' tuples, each context a block under its
conversation, then `attention_checks_per_hit` check blocks: a context off this HIT (when there is one) with its own
tuples, one of them with a broken reply planted at a drawn place (`BWS_GOLD`: an attentive
annotator picks it as the worst) and the others fillers (`BWS_FILLER`: answered and checked as any
tuple, never stored: they are judged on their own HIT), so a check block is shaped as a real one.
The broken reply is a null entry of `tuple_responses`, its text in `broken_text`.
"""

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.bws.across_layout import bws_across_layout
from annotation.kinds.bws.hit_items import hit_items
from annotation.kinds.bws.tuples import balanced_tuples
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


def _broken(members, rng):
    """The tuple with one member, drawn, replaced by the broken reply (a null entry)."""
    members = list(members)
    members[rng.randrange(len(members))] = None
    return members


def _check_block(plan, shown, blocks, rng):
    """A gold tuple among filler tuples under a borrowed conversation, as a new block: that
    context's own tuples, one of them with a broken reply planted, so the block is shaped as a real
    one (a lone set under a conversation would say "this is the check"). None when every context
    is on this HIT already: the gold tuple then joins a real block of its own context."""
    others = [pk for pk in plan if pk not in shown]
    if not others:
        block = rng.choice(blocks)
        context_id = block[0][1]
        block.insert(
            rng.randint(0, len(block)), (HITItem.Kind.BWS_GOLD, context_id, _broken(rng.choice(plan[context_id]), rng))
        )
        return None
    context_id = rng.choice(others)
    shown.add(context_id)
    tuples = plan[context_id]
    gold = rng.randrange(len(tuples))
    return [
        (HITItem.Kind.BWS_GOLD, context_id, _broken(members, rng))
        if n == gold
        else (HITItem.Kind.BWS_FILLER, context_id, list(members))
        for n, members in enumerate(tuples)
    ]


def _hit_items(hit, chunk, plan, survey, rng):
    blocks = [[(HITItem.Kind.BWS, context_id, members) for members in plan[context_id]] for context_id in chunk]
    real = list(blocks)
    shown = set(chunk)
    for _ in range(survey.attention_checks_per_hit):
        block = _check_block(plan, shown, real, rng)
        if block is not None:
            blocks.insert(rng.randint(1, len(blocks)), block)
    return hit_items(hit, [entry for block in blocks for entry in block], rng)


def bws_layout(*, survey, contexts):
    """The survey's HITs and their tuple items, saved."""
    if survey.tuple_size < MIN_TUPLE:
        raise HITLayoutError(f"A best-worst tuple shows at least {MIN_TUPLE} replies.")
    if survey.bws_across_contexts:
        return bws_across_layout(survey=survey, by_context=_responses(survey), contexts=contexts)
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
        items.extend(_hit_items(hit, chunk, plan, survey, seeded_rng(survey, f"hit{hit.position}")))
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits
