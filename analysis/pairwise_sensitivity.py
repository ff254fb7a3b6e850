"""The pairwise section's filter sensitivity: would the ranking of the systems, or the metrics'
pairwise accuracy, change under another annotator filter?

The rating audit's question (`analysis.sensitivity`) for pairwise surveys. For a grid of settings
(the kappa threshold, the position-bias bound, the swapped-repeat consistency, the attention
policy and the minimum time; one varied at a time from each survey's own settings), quality
control's own rules decide again which annotators each pairwise survey keeps
(`annotation.quality.whatif`, on the evidence of the cached quality reports; nothing stored
changes). The kept judgements are ranked by Bradley-Terry and every metric's tie-calibrated
pairwise accuracy is computed on them, as the pairwise section does for the study's settings.
No bootstrap: the question is whether the ranking moves, not its uncertainty again.
"""

import numpy as np

from analysis.pairwise_section import judgement_arrays, kept_systems, metric_table, pairwise_stats
from annotation.kinds.pairwise.selectors import accepted_judgements, judgement_rows
from annotation.models import Assignment, Survey
from annotation.quality import whatif
from annotation.quality.selectors import survey_quality
from scoring.selectors import metric_scores

KAPPA_GRID = (None, 0.0, 0.2, 0.4)
POSITION_GRID = (None, 0.2, 0.3, 0.4)
REPEATS_GRID = (None, 0.5, 0.75, 1.0)
ATTENTION_GRID = ("flag", "exclude")
MIN_SECONDS_GRID = (None, 2.0, 5.0)
STUDY = "study"
ANNOTATOR = 6  # judgement_rows: the annotator's id

METHOD = (
    "Each setting changes one rule for every pairwise survey and keeps the others at the survey's own "
    "settings; quality control's rules re-decide which annotators each survey keeps (researcher overrides "
    "hold; rejected assignments and unconfirmed platform work stay out). The kept judgements are ranked by "
    "Bradley-Terry (no bootstrap) and each metric's tie-calibrated pairwise accuracy is computed on them. "
    "The position-bias and repeat rules count only where a survey has enough choices or repeats "
    "(its own minimums). Nothing stored changes."
)


def _off(value, text):
    return f"{text} off" if value is None else None


def settings_grid():
    """`[(key, factor, value, label, changes)]`: the study's own settings first, then one rule varied."""
    grid = [(STUDY, STUDY, None, "the study's settings", {})]
    grid += [
        (f"kappa={value}", "kappa_threshold", value, _off(value, "κ rule") or f"κ threshold {value:g}",
         {"kappa_threshold": value})
        for value in KAPPA_GRID
    ]  # fmt: skip
    grid += [
        (f"position={value}", "max_position_bias", value,
         _off(value, "position rule") or f"left share 0.5 ± {value:g}", {"max_position_bias": value})
        for value in POSITION_GRID
    ]  # fmt: skip
    grid += [
        (f"repeats={value}", "min_repeat_consistency", value,
         _off(value, "repeat rule") or f"repeats consistent ≥ {value:g}", {"min_repeat_consistency": value})
        for value in REPEATS_GRID
    ]  # fmt: skip
    grid += [
        (f"attention={value}", "attention_policy", value, f"attention checks: {value}", {"attention_policy": value})
        for value in ATTENTION_GRID
    ]
    grid += [
        (f"min_seconds={value}", "min_seconds_per_item", value,
         _off(value, "time rule") or f"at least {value:g} s per item", {"min_seconds_per_item": value})
        for value in MIN_SECONDS_GRID
    ]  # fmt: skip
    return grid


def _judged_rows(dataset, survey, aspect, kept):
    """The survey's judgements the rules may judge (not rejected, platform-confirmed), as rows."""
    rows = accepted_judgements(dataset=dataset, surveys=[survey], aspect=aspect, apply_exclusions=False)
    rows = rows.exclude(assignment__status=Assignment.Status.REJECTED)
    if kept is not None:
        rows = rows.filter(response_a__system__name__in=kept, response_b__system__name__in=kept)
    return judgement_rows(rows)


def _ranking(rows):
    """`(systems, strengths)`: Bradley-Terry log-strengths of the systems in `rows`."""
    systems, _context, a, b, outcome = judgement_arrays(rows)
    stats = pairwise_stats()
    return systems, stats.bradley_terry(stats.win_counts(a, b, outcome, len(systems)))


def _order(systems, strengths):
    return [systems[i] for i in np.argsort(-np.asarray(strengths), kind="stable")]


def pairwise_sensitivity_section(*, dataset, surveys=None, aspect="overall", systems=None):
    """`{"settings": [...], "rows": [...], "method"}`, or None when no pairwise survey has judgements.

    `settings`: one summary per setting (annotators and judgements kept, the order of the systems,
    whether it is the study's, Kendall's tau of the strengths against the study's, the best metric
    and the largest change of a metric's accuracy); `rows`: one per setting and metric.
    """
    scope = Survey.objects.filter(dataset=dataset, task_type=Survey.TaskType.PAIRWISE)
    scope = scope.filter(pairwise_judgements__isnull=False).distinct().order_by("pk")
    if surveys is not None:
        scope = scope.filter(pk__in=[s.pk for s in surveys])
    kept = kept_systems(systems)
    judged = [(survey, _judged_rows(dataset, survey, aspect, kept)) for survey in scope]
    judged = [(survey, rows) for survey, rows in judged if rows]
    if not judged:
        return None
    stored = {survey.pk: whatif.stored_evidence(survey_quality(survey=survey)) for survey, _rows in judged}
    own = {survey.pk: whatif.settings_of(survey) for survey, _rows in judged}
    scores = metric_scores(dataset=dataset)
    settings, table, baseline = [], [], None
    computed = {}  # by the annotators each survey keeps: most settings keep the same ones
    for key, factor, value, label, changes in settings_grid():
        excluded = tuple(
            frozenset(whatif.excluded_under(stored[survey.pk], own[survey.pk].varied(**changes)))
            for survey, _rows in judged
        )
        rows = [
            row for (_survey, survey_rows), out in zip(judged, excluded, strict=True)
            for row in survey_rows if row[ANNOTATOR] not in out
        ]  # fmt: skip
        summary = {"setting": key, "factor": factor, "value": value, "label": label}
        summary |= {"n_judgements": len(rows), "n_annotators": len({row[ANNOTATOR] for row in rows})}
        if not rows:
            settings.append({**summary, "order": [], "same_order": None, "kendall_vs_study": None})
            continue
        if excluded not in computed:
            names, strengths = _ranking(rows)
            metrics = {entry["metric"]: entry for entry in metric_table(rows, names, strengths, scores)[0]}
            computed[excluded] = names, strengths, metrics
        names, strengths, metrics = computed[excluded]
        order = _order(names, strengths)
        if key == STUDY:  # first in the grid: what every other setting is compared with
            baseline = {"strength": dict(zip(names, strengths, strict=True)), "metrics": metrics, "order": order}
        tau = same_order = None
        if baseline is not None:
            common = [name for name in names if name in baseline["strength"]]
            tau = pairwise_stats().kendall_tau(
                [baseline["strength"][name] for name in common], [strengths[names.index(name)] for name in common]
            )
            same_order = order == baseline["order"]
        shifts = []
        for metric, entry in metrics.items():
            before = (baseline or {"metrics": {}})["metrics"].get(metric, {}).get("pairwise_accuracy")
            now = entry["pairwise_accuracy"]
            delta = None if before is None or now is None else now - before
            if delta is not None:
                shifts.append(abs(delta))
            table.append(
                {"setting": key, "factor": factor, "value": value, "label": label, "metric": metric,
                 "pairwise_accuracy": entry["pairwise_accuracy"], "n_pairs": entry["n_pairs"],
                 "delta_accuracy": delta}
            )  # fmt: skip
        best = max(metrics.values(), key=lambda entry: entry["pairwise_accuracy"] or 0, default=None)
        settings.append(
            {**summary, "order": order, "same_order": same_order, "kendall_vs_study": tau,
             "top_metric": best["metric"] if best else None, "max_shift": max(shifts, default=None)}
        )  # fmt: skip
    return {
        "settings": settings,
        "rows": table,
        "method": METHOD,
        # What the rules judged before any exclusion: the page says where a setting keeps none of it.
        "n_judgements_judged": sum(len(rows) for _survey, rows in judged),
        "n_annotators_judged": len({row[ANNOTATOR] for _survey, rows in judged for row in rows}),
    }
