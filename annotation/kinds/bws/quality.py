"""What the shared quality rules read of a best-worst survey, and its simulated annotator.

Rules (agreement, timing, attention) read ratings: each judgement is read as a label per shown
reply, worst (0), neither (1) or best (2), of the item (tuple item, reply). Two annotators shown
the same tuple then agree on a reply when they put it in the same place; Cohen's kappa on these
ordered labels is what "do they pick alike" means here. Rejected assignments are left out.
"""

from annotation.kinds.simulated import latent_quality
from annotation.models import Assignment, BWSJudgement, Response

WORST, NEITHER, BEST = 0, 1, 2
SCALE = (WORST, NEITHER, BEST)
LABELS = {WORST: "Worst", NEITHER: "Neither", BEST: "Best"}


def kept_judgements(survey):
    return BWSJudgement.objects.filter(survey=survey).exclude(assignment__status=Assignment.Status.REJECTED)


def judgement_rows(survey):
    """Each judgement as one rating row per shown reply (see above), in the order stored."""
    rows = []
    judgements = kept_judgements(survey).order_by("id")
    for item, annotator, responses, best, worst, seconds in judgements.values_list(
        "item_id", "annotator_id", "responses", "best_id", "worst_id", "seconds"
    ):
        for response in responses:
            label = BEST if response == best else WORST if response == worst else NEITHER
            rows.append(
                {"annotator_id": annotator, "response_id": (item, response), "score": label, "seconds": seconds}
            )
    return rows


# A diligent annotator sees each reply's latent quality through noise ~ N(0, 0.15), as a pairwise one does.
NOISE_SD = 0.15


def simulated_picks(annotator, *, items, aspects, survey):
    """A simulated annotator's best and worst per tuple (numbers as the page shows them, from 1)."""
    ids = {pk for item in items for pk in item.tuple_responses if pk}
    texts = {response.pk: response for response in Response.objects.filter(pk__in=ids)}
    answers = {}
    for item in items:
        members = item.tuple_responses
        if annotator.careless:
            best, worst = annotator.rng.sample(range(len(members)), 2)
        else:
            # the broken reply of a gold tuple is worse than any real one
            seen = [
                -1.0 if pk is None else latent_quality(texts[pk]) + annotator.rng.gauss(0, NOISE_SD) for pk in members
            ]
            best = max(range(len(members)), key=seen.__getitem__)
            worst = min(range(len(members)), key=seen.__getitem__)
        seconds = annotator.rng.uniform(0.3, 1.5) if annotator.careless else annotator.rng.uniform(6, 20)
        answers[item.pk] = {"scores": {"best": str(best + 1), "worst": str(worst + 1)}, "seconds": seconds}
    return answers

