"""A dataset's human scores and systems, as every later number reads them."""

from django.db.models import Count

from annotation.models import System
from annotation.quality.selectors import accepted_ratings
from annotation.quality.weighting import weighted_scores


def human_scores(*, dataset, surveys=None, aspect="overall", apply_exclusions=True, weighting="plain", notes=None):
    """Mean accepted human score per response: `{response_id: (mean, count)}`.

    Every downstream number (correlations, ADEM training data) reads human scores through
    this one function, so exclusions apply everywhere alike. `surveys` limits the surveys
    used (default: every survey of the dataset). `weighting` (annotation.quality.weighting): the
    plain mean (default), per-worker z-scores, or a MACE or Dawid-Skene competence-weighted mean;
    what it could not do is appended to `notes` (a list) when given.
    """
    ratings = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    if weighting != "plain":
        rows = ratings.order_by("pk").values_list("survey_id", "annotator_id", "response_id", "score")
        scores, said = weighted_scores(list(rows), weighting)
        if notes is not None:
            notes.extend(said)
        return scores
    totals = {}
    for response_id, score in ratings.values_list("response_id", "score").iterator(chunk_size=10_000):
        total, count = totals.get(response_id, (0, 0))
        totals[response_id] = (total + score, count + 1)
    return {response_id: (total / count, count) for response_id, (total, count) in totals.items()}


def dataset_systems(*, dataset):
    """The dataset's systems with their number of responses (`n_responses`)."""
    return System.objects.filter(dataset=dataset).annotate(n_responses=Count("responses")).order_by("name")
