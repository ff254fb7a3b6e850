"""Laying a rating (or writing) survey out as HITs.

Layout, per HIT: `contexts_per_hit` regular contexts, each with the responses of every selected
system (contiguous, in a seeded shuffled order), the survey's overlap contexts, and
`attention_checks_per_hit` checks (gold when the survey has gold checks, instructed otherwise,
alternating when both are wanted) at seeded positions between contexts. A check is a block as
large as a real one, its gold reply or instruction among filler replies (see `checks`), and a HIT
never shows the same gold check twice (its conversation seen twice would give it away): a HIT that
wants more gold checks than the survey has gets instructed ones for the rest. Nor does it show a
borrowed context twice: each check's fillers come from contexts no other block of the HIT shows.

The overlap contexts sit on every HIT, but an annotator rates them only once: the items shown to
an assignment leave out overlap responses its annotator already rated (see `assignment_items`).
So every annotator's work contains the overlap set, which is what agreement statistics need,
and nobody rates the same response twice.
"""

from annotation.kinds.base import seeded_rng
from annotation.kinds.rating.checks import CheckBlocks, check_block_size
from annotation.models import HIT, HITItem, Response, System

INSTRUCTED_SCORES = (1, 2, 4, 5)


def _responses_by_context(survey):
    systems = survey.systems.all()
    if not systems.exists():
        systems = System.objects.filter(dataset=survey.dataset)
    responses = Response.objects.filter(context__dataset=survey.dataset, system__in=systems).order_by(
        "context__position", "system__name"
    )
    by_context = {}
    for response in responses.only("pk", "context_id"):
        by_context.setdefault(response.context_id, []).append(response.pk)
    return by_context


def context_layout(*, survey, contexts, write=False):
    """The survey's HITs and items, one block per context. `write`: a writing survey's layout, one
    item per context (the reply to write) and no checks; else every chosen system's reply to it."""
    by_context = {} if write else _responses_by_context(survey)
    if not write:
        contexts = [pk for pk in contexts if pk in by_context]
    layout_rng = seeded_rng(survey, "layout")
    overlap = sorted(layout_rng.sample(contexts, min(survey.overlap_contexts, len(contexts))))
    regular = [pk for pk in contexts if pk not in set(overlap)]
    layout_rng.shuffle(regular)
    chunks = [regular[i : i + survey.contexts_per_hit] for i in range(0, len(regular), survey.contexts_per_hit)]
    if not chunks and overlap:
        chunks = [[]]

    golds = sorted(survey.attention_checks.values_list("pk", flat=True))
    n_checks = 0 if write else survey.attention_checks_per_hit
    check_blocks = CheckBlocks(survey=survey, by_context=by_context) if n_checks else None
    hits = HIT.objects.bulk_create(HIT(survey=survey, position=i) for i in range(len(chunks)))
    items = []
    for hit, chunk in zip(hits, chunks, strict=True):
        rng = seeded_rng(survey, f"hit{hit.position}")
        blocks = [[("overlap" if pk in overlap else "regular", pk)] for pk in [*chunk, *overlap]]
        rng.shuffle(blocks)
        on_hit = [*chunk, *overlap]
        shown = set(on_hit)
        unused_golds = rng.sample(golds, len(golds))
        for n in range(n_checks):
            use_gold = unused_golds and (n % 2 == 0 or survey.attention_checks_per_hit == 1)
            check = ("gold", unused_golds.pop()) if use_gold else ("instructed", rng.choice(INSTRUCTED_SCORES))
            # Never first: a check after some real items is harder to spot.
            blocks.insert(rng.randint(1, len(blocks)) if blocks else 0, [check])
        position = 0
        for ((kind, value),) in blocks:
            if kind in ("regular", "overlap"):
                if write:
                    members = [{"kind": HITItem.Kind.WRITE, "context_id": value}]
                else:
                    response_ids = list(by_context[value])
                    rng.shuffle(response_ids)
                    members = [
                        {"kind": HITItem.Kind.RESPONSE, "context_id": value, "response_id": r} for r in response_ids
                    ]
                for member in members:
                    items.append(HITItem(hit=hit, position=position, is_overlap=kind == "overlap", **member))
                    position += 1
            else:
                size = check_block_size(sizes=[len(by_context[pk]) for pk in on_hit], by_context=by_context, rng=rng)
                if kind == "gold":
                    members = check_blocks.members(check_id=value, size=size, on_hit=shown, rng=rng)
                else:
                    members = check_blocks.instructed_members(score=value, size=size, on_hit=shown, rng=rng)
                # A context borrowed by this check is shown by it: no later check borrows it again.
                shown.update(member["context_id"] for member in members if member.get("context_id"))
                for member in members:
                    items.append(HITItem(hit=hit, position=position, **member))
                    position += 1
    HITItem.objects.bulk_create(items, batch_size=1000)
    return hits
