"""Pairwise filter sensitivity: would the ranking of the systems, or the metrics'
pairwise accuracy, change under another annotator filter?

The rating audit's question (`analysis.sections.sensitivity`) for pairwise surveys. For a grid of settings
(the kappa threshold, the position-bias bound, the swapped-repeat consistency, the attention
policy and the minimum time; one varied at a time from each survey's own settings), quality
control's own rules decide again which annotators each pairwise survey keeps
(`annotation.quality.whatif`, on the evidence of the cached quality reports; nothing stored
changes). The kept judgements are ranked by Bradley-Terry and every metric's tie-calibrated
pairwise accuracy is computed on them, as the pairwise section does for the study's settings.
No bootstrap: the question is whether the ranking moves, not its uncertainty again.
"""

import numpy as np

from analysis.report.cells import count, number, plural
from analysis.report.display import Column, DisplayTable
from analysis.report.population import kept_systems
from analysis.sections.base import Section
from analysis.sections.pairwise import judgement_arrays, metric_table, pairwise_stats
from annotation.kinds.pairwise.selectors import accepted_judgements, judgement_rows
from annotation.kinds.registry import task_types_reporting
from annotation.models import Assignment, Survey
from annotation.quality import whatif
from annotation.quality.selectors import survey_quality
from scoring.selectors.scores import metric_scores

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
    scope = Survey.objects.filter(dataset=dataset, task_type__in=task_types_reporting("pairwise"))
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


def compute(context):
    """Also when the study's own settings leave no judgement (no pairwise section): that is where
    seeing what another filter would keep helps most."""
    section = pairwise_sensitivity_section(
        dataset=context.dataset, surveys=context.surveys, aspect=context.aspect, systems=context.systems
    )
    return {"pairwise_sensitivity": section}


def applies(data):
    return bool(data.get("pairwise_sensitivity"))


# --- the page ---------------------------------------------------------------------------------


def _order_cell(setting):
    """The systems best first: written out for the study's settings and where another setting
    changes it, "same" where it does not (a column of repeated orders would hide the one that moved)."""
    order = " > ".join(setting.get("order") or []) or "–"
    if setting.get("setting") == "study" or setting.get("same_order") is None:
        return order
    return "same" if setting["same_order"] else f"changed: {order}"


def pairwise_sensitivity_table(data):
    """One row per setting of the pairwise audit: what it keeps and whether the ranking moves."""
    section = data.get("pairwise_sensitivity") or {}
    rows = [
        [
            setting["label"],
            count(setting.get("n_annotators")),
            count(setting.get("n_judgements")),
            _order_cell(setting),
            number(setting.get("kendall_vs_study")),
            setting.get("top_metric") or "–",
            number(setting.get("max_shift")),
        ]
        for setting in section.get("settings", [])
    ]
    return DisplayTable(
        name="pairwise_sensitivity",
        title="Pairwise filter sensitivity",
        download="pairwise filter sensitivity",
        columns=[
            Column("Setting"),
            Column("Annotators", True),
            Column("Judgements", True),
            Column("Systems, best first"),
            Column("τ vs study", True),
            Column("Best metric"),
            Column("Largest |Δ|", True),
        ],
        rows=rows,
        note=(
            _pairwise_empty_settings(section)
            + "Would the ranking change under another annotator filter? Systems: their Bradley-Terry order, "
            "\"same\" where it is the study's; τ: Kendall's tau of the strengths with the study's; largest |Δ|: the "
            "largest change of a metric's tie-calibrated pairwise accuracy. " + section.get("method", "")
        ),
        empty="No pairwise judgements.",
    )


def _pairwise_empty_settings(section):
    """One sentence on the settings that keep no judgement (their rows read "0 0 – – – –"), or ""."""
    settings = section.get("settings", [])
    empty = [setting for setting in settings if not setting.get("n_judgements")]
    if not empty:
        return ""
    judged, annotators = section.get("n_judgements_judged"), section.get("n_annotators_judged")
    what = (
        f"the {plural(judged, 'pairwise judgement')} of {plural(annotators, 'annotator')}"
        if judged is not None and annotators is not None
        else "the pairwise judgements"
    )
    if len(empty) == len(settings):
        return (
            f"No setting keeps any of {what}: quality control's rules exclude every annotator under each of them, "
            "so there is nothing to rank (– in every row). See Quality for each annotator's reasons. "
        )
    return (
        f"{plural(len(empty), 'setting')} of {len(settings)} keep none of {what}: the rules exclude every "
        "annotator under them, so there is nothing to rank (0 judgements, – in the row). "
    )


def present(data):
    return {"pairwise_audit": pairwise_sensitivity_table(data)}


def nav(data, context):
    return [("t-pairwise-sensitivity", "Pairwise filter sensitivity")]


# --- the exports ------------------------------------------------------------------------------


PAIRWISE_SENSITIVITY_COLUMNS = [
    "setting",
    "factor",
    "value",
    "metric",
    "pairwise_accuracy",
    "n_pairs",
    "delta_accuracy",
]

PAIRWISE_SETTING_COLUMNS = ["n_judgements", "n_annotators", "same_order", "kendall_vs_study", "order"]


def pairwise_sensitivity_export(data):
    """One row per setting and metric, with the setting's judgements, annotators and system order."""
    section = data.get("pairwise_sensitivity") or {}
    settings = {setting["setting"]: setting for setting in section.get("settings", [])}
    header = [*PAIRWISE_SENSITIVITY_COLUMNS[:3], *PAIRWISE_SETTING_COLUMNS, *PAIRWISE_SENSITIVITY_COLUMNS[3:]]
    rows = []
    for row in section.get("rows", []):
        setting = settings.get(row["setting"], {})
        summary = [setting.get(column) for column in PAIRWISE_SETTING_COLUMNS[:-1]]
        order = " > ".join(setting.get("order") or [])
        rows.append([*(row.get(c) for c in PAIRWISE_SENSITIVITY_COLUMNS[:3]), *summary, order,
                     *(row.get(c) for c in PAIRWISE_SENSITIVITY_COLUMNS[3:])])  # fmt: skip
    return header, rows


SECTION = Section(
    name="pairwise_sensitivity",
    keys=("pairwise_sensitivity",),
    compute=compute,
    applies=applies,
    template="analysis/sections/pairwise_sensitivity.html",
    present=present,
    nav=nav,
    tables={"pairwise_sensitivity": pairwise_sensitivity_export},
)
