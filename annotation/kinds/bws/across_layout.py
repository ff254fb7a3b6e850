"""Laying out a best-worst survey whose sets cross contexts (`survey.bws_across_contexts`).

A HIT takes `contexts_per_hit` contexts (the last HIT takes any remainder too small for a set of its
own) and shows balanced tuples of their replies (`across_tuples`), each reply to a different
context: an item of kind BWS with no context of its own, its response ids in shown order in
`tuple_responses`. The page shows each reply under its own conversation (`across_page`).
`attention_checks_per_hit` gold sets are copies of drawn sets of the HIT with one reply replaced by
a broken one (`broken_text`, a null entry) shown under the replaced reply's conversation, which the
item keeps as its `context`: an attentive annotator picks it as the worst. A gold set is shaped as
any set of the page.
"""

from annotation.kinds.base import HITLayoutError, seeded_rng
from annotation.kinds.bws.across_tuples import across_problem, across_tuples
from annotation.kinds.bws.hit_items import hit_items
from annotation.models import HIT, HITItem


def across_chunks(ordered, per_hit, size):
    """The contexts in HITs of `per_hit`; a remainder of fewer than `size` joins the HIT before it."""
    chunks = [ordered[i : i + per_hit] for i in range(0, len(ordered), per_hit)]
    if len(chunks) > 1 and len(chunks[-1]) < size:
        chunks[-2].extend(chunks.pop())
    return chunks


def _hit_items(hit, chunk, by_context, survey, rng):
    pairs = [(context_id, response_id) for context_id in chunk for response_id in by_context[context_id]]
    tuples = across_tuples(pairs, survey.tuple_size, rng)
    entries = [(HITItem.Kind.BWS, None, [response for _, response in members]) for members in tuples]
    for _ in range(survey.attention_checks_per_hit if tuples else 0):
        members = list(rng.choice(tuples))
        broken = rng.randrange(len(members))
        context_id = members[broken][0]
        shown = [None if n == broken else response for n, (_, response) in enumerate(members)]
        entries.insert(rng.randint(0, len(entries)), (HITItem.Kind.BWS_GOLD, context_id, shown))
    return hit_items(hit, entries, rng)


def bws_across_layout(*, survey, by_context, contexts):
    """The survey's HITs and their across-context tuple items, saved. `by_context`: `{context id:
    [response id, ...]}` of the chosen systems."""
    ordered = [pk for pk in contexts if by_context.get(pk)]
    if across_problem(ordered, survey.tuple_size):
        raise HITLayoutError(
            f"A set across conversations shows {survey.tuple_size} replies to different conversations: the chosen "
            f"systems reply in {len(ordered)} conversation{'s' if len(ordered) != 1 else ''} only."
        )
    per_hit = survey.contexts_per_hit
    if per_hit < survey.tuple_size:
        raise HITLayoutError(
            f"A set across conversations shows {survey.tuple_size} replies to different conversations: give at "
            f"least {survey.tuple_size} contexts per HIT (now {per_hit})."
        )
    seeded_rng(survey, "layout").shuffle(ordered)
    chunks = across_chunks(ordered, per_hit, survey.tuple_size)
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items = []
    for hit, chunk in zip(hits, chunks, strict=True):
        items.extend(_hit_items(hit, chunk, by_context, survey, seeded_rng(survey, f"hit{hit.position}")))
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits
