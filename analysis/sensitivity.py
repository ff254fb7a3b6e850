"""The report's filter-sensitivity section: would the conclusion change under another rater filter?

For a grid of settings (the kappa threshold, the attention-check policy, the minimum time per
item; one varied at a time from each survey's own settings), quality control's own rules decide
again which annotators each survey keeps (`annotation.quality.whatif`, on the evidence of the
cached quality reports; nothing stored changes), and `analysis.stats.sensitivity` correlates every
metric with the human means of the kept ratings.
"""

from dataclasses import asdict

import numpy as np

from analysis.stats import sensitivity as stats
from annotation.models import Assignment, Survey
from annotation.quality import whatif
from annotation.quality.selectors import accepted_ratings, survey_quality

KAPPA_GRID = (None, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
ATTENTION_GRID = ("flag", "exclude")
MIN_SECONDS_GRID = (None, 1.0, 2.0, 3.0, 5.0)
STUDY = "study"

METHOD = (
    "Each setting changes one rule for every survey and keeps the others at the survey's own settings; "
    "quality control's rules re-decide which annotators each survey keeps (researcher overrides hold; "
    "rejected assignments and unconfirmed platform work stay out), and each response's human score is "
    "the mean of its kept ratings. Correlations are over this report's responses that keep a rating; "
    "95% CIs by Fisher's z (Spearman: standard error sqrt(1.06/(n-3))). Nothing stored changes."
)


def _number(value):
    return "off" if value is None else f"{value:g}"


def settings_grid():
    """`[(key, factor, value, label, changes)]`: the study's own settings first, then one rule varied."""
    grid = [(STUDY, STUDY, None, "the study's settings", {})]
    grid += [
        (f"kappa={_number(v)}", "kappa_threshold", v, "κ rule off" if v is None else f"κ threshold {v:g}",
         {"kappa_threshold": v})
        for v in KAPPA_GRID
    ]  # fmt: skip
    grid += [
        (f"attention={v}", "attention_policy", v, f"attention checks: {v}", {"attention_policy": v})
        for v in ATTENTION_GRID
    ]
    grid += [
        (f"min_seconds={_number(v)}", "min_seconds_per_item", v,
         "time rule off" if v is None else f"at least {v:g} s per item", {"min_seconds_per_item": v})
        for v in MIN_SECONDS_GRID
    ]  # fmt: skip
    return grid


def _rating_arrays(dataset, surveys, aspect, response_ids):
    """Every rating the rules may judge (not rejected, platform-confirmed) of this report's responses."""
    ratings = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=False)
    ratings = ratings.exclude(assignment__status=Assignment.Status.REJECTED)
    values = np.array(list(ratings.values_list("survey_id", "annotator_id", "response_id", "score")), dtype=float)
    values = values.reshape(-1, 4)
    ids, scores = values[:, :3].astype(np.int64), values[:, 3]
    position = np.minimum(np.searchsorted(response_ids, ids[:, 2]), max(response_ids.size - 1, 0))
    known = response_ids[position] == ids[:, 2] if response_ids.size else np.zeros(len(ids), dtype=bool)
    return ids[known], scores[known], position[known]


def sensitivity_section(*, dataset, surveys, aspect, inputs):
    """The `sensitivity` section: `{"settings": [...], "rows": [...], "study_settings": [...], "method"}`.

    `rows` has one row per setting and metric; `settings` one summary per setting (annotators,
    ratings and responses kept; the best metric; whether the metrics' order by r is the study's).
    """
    scope = Survey.objects.filter(dataset=dataset, ratings__isnull=False).distinct().order_by("pk")
    if surveys is not None:
        scope = scope.filter(pk__in=[s.pk for s in surveys])
    scope = list(scope)
    stored = {survey.pk: whatif.stored_evidence(survey_quality(survey=survey)) for survey in scope}
    own = {survey.pk: whatif.settings_of(survey) for survey in scope}
    ids, scores, response_index = _rating_arrays(dataset, scope, aspect, inputs.response_ids)
    # One integer per (survey, annotator): exclusion, and counting raters, are per survey. The width
    # covers every annotator the rules may exclude too, not only those with kept ratings: an excluded
    # annotator whose ratings are not here (rejected, unconfirmed) must not map onto another survey's.
    judged = [annotator_id for evidence in stored.values() for annotator_id in evidence.evidence]
    width = int(max(ids[:, 1].max(initial=0), max(judged, default=0))) + 1
    rater = ids[:, 0] * width + ids[:, 1]
    grid = settings_grid()
    masks = {}
    for key, _factor, _value, _label, changes in grid:
        excluded = [
            survey_id * width + annotator_id
            for survey_id, evidence in stored.items()
            for annotator_id in whatif.excluded_under(evidence, own[survey_id].varied(**changes))
        ]
        masks[key] = ~np.isin(rater, np.array(excluded, dtype=np.int64))
    results = stats.audit(response_index, scores, rater, masks, inputs.metrics)
    settings, table = [], []
    for key, factor, value, label, _changes in grid:
        result = results[key]
        summary = {key_: result[key_] for key_ in ("n_annotators", "n_ratings", "n_responses", "top_metric")}
        settings.append(
            {"setting": key, "factor": factor, "value": value, "label": label, **summary,
             "same_ranking": result["same_ranking"], "max_shift": result["max_shift"]}
        )  # fmt: skip
        table += [
            {"setting": key, "factor": factor, "value": value, "label": label,
             "n_annotators": result["n_annotators"], "n_ratings": result["n_ratings"], **row}
            for row in result["rows"]
        ]  # fmt: skip
    return {
        "settings": settings,
        "rows": table,
        "study_settings": [{"survey": survey.name, **asdict(own[survey.pk])} for survey in scope],
        "method": METHOD,
    }
