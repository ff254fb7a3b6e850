"""Filter sensitivity: would the conclusion change under another rater filter?

For a grid of settings (the kappa threshold, the attention-check policy, the minimum time per
item; one varied at a time from each survey's own settings), quality control's own rules decide
again which annotators each survey keeps (`annotation.quality.whatif`, on the evidence of the
cached quality reports; nothing stored changes), and `analysis.stats.sensitivity` correlates every
metric with the human means of the kept ratings.
"""

from dataclasses import asdict

import numpy as np

from analysis.report.cells import Estimate, count, interval, number, plural
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import latex_escape, tabular
from analysis.sections.base import Section, with_ratings
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


def compute(context):
    section = sensitivity_section(
        dataset=context.dataset, surveys=context.surveys, aspect=context.aspect, inputs=context.inputs
    )
    return {"sensitivity": section}


# --- the page ---------------------------------------------------------------------------------


def _same(value):
    if value is None:
        return "–"
    return "same" if value else "changed"


def sensitivity_table(data):
    """One row per setting: what the filter keeps and whether the metrics' order changes."""
    section = data.get("sensitivity") or {}
    rows = [
        [
            setting["label"],
            count(setting.get("n_annotators")),
            count(setting.get("n_ratings")),
            count(setting.get("n_responses")),
            setting.get("top_metric") or "–",
            _same(setting.get("same_ranking")),
            number(setting.get("max_shift")),
        ]
        for setting in section.get("settings", [])
    ]
    return DisplayTable(
        name="sensitivity",
        title="Filter sensitivity",
        download="filter sensitivity",
        columns=[
            Column("Setting"),
            Column("Annotators", True),
            Column("Ratings", True),
            Column("Responses", True),
            Column("Best metric (r)"),
            Column("Order of metrics"),
            Column("Largest |Δr|", True),
        ],
        rows=rows,
        note=(
            "Would the conclusion change under another rater filter? Order of metrics: by Pearson r, compared "
            "with the study's settings; |Δr|: the largest change of a metric's r. " + section.get("method", "")
        ),
        empty="No rated responses.",
    )


def short_label(setting):
    """A column heading for a setting: "study", "κ 0.3", "κ off", "attention exclude", "≥ 2 s", "time off"."""
    factor, value = setting.get("factor"), setting.get("value")
    if factor == "kappa_threshold":
        return "κ off" if value is None else f"κ {value:g}"
    if factor == "attention_policy":
        return f"attention {value}"
    if factor == "min_seconds_per_item":
        return "time off" if value is None else f"≥ {value:g} s"
    return "study"


def sensitivity_metrics_table(data):
    """Metrics as rows, settings as columns: each metric's r with its interval under each filter."""
    section = data.get("sensitivity") or {}
    settings = section.get("settings", [])
    cells = {(row["metric"], row["setting"]): row for row in section.get("rows", [])}
    metrics = list(dict.fromkeys(row["metric"] for row in section.get("rows", [])))
    rows = []
    for metric in metrics:
        line = [metric]
        for setting in settings:
            row = cells.get((metric, setting["setting"])) or {}
            line.append(
                Estimate(number(row.get("pearson")), interval(row.get("pearson_ci_low"), row.get("pearson_ci_high")))
            )
        rows.append(line)
    return DisplayTable(
        name="sensitivity_metrics",
        title="Pearson r under every setting",
        download="filter sensitivity",
        columns=[Column("Metric"), *[Column(short_label(setting), True) for setting in settings]],
        rows=rows,
        note=(
            f"{plural(len(metrics), 'metric')} × {plural(len(settings), 'setting')}: Pearson r and its 95% Fisher-z "
            "interval (Spearman ρ, Δr and n per setting are in the CSV and JSON)."
        ),
    )


def sensitivity_display(data):
    """The section's two tables, or None when the report has no audit (computed before it existed)."""
    if not (data or {}).get("sensitivity"):
        return None
    return {"summary": sensitivity_table(data), "metrics": sensitivity_metrics_table(data)}


def present(data):
    return {"audit": sensitivity_display(data)}


def nav(data, context):
    return [("t-sensitivity", "Filter sensitivity")]


# --- the exports ------------------------------------------------------------------------------


SENSITIVITY_COLUMNS = [
    "setting",
    "factor",
    "value",
    "n_annotators",
    "n_ratings",
    "metric",
    "pearson",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_ci_low",
    "spearman_ci_high",
    "n",
    "delta_pearson",
]


def sensitivity_export(data):
    rows = (data.get("sensitivity") or {}).get("rows", [])
    return SENSITIVITY_COLUMNS, [[row.get(column) for column in SENSITIVITY_COLUMNS] for row in rows]


def _cell(value, digits=3):
    return "--" if value is None else f"{value:.{digits}f}"


def latex_sensitivity(data, escape):
    """`_tabular`'s arguments for the per-setting summary of the audit."""
    header = ["Setting", "Annotators", "Ratings", "Best metric", "Order", r"max $|\Delta r|$"]
    rows = [
        [
            escape(setting["label"]),
            str(setting["n_annotators"]),
            str(setting["n_ratings"]),
            escape(setting.get("top_metric") or "--"),
            {True: "same", False: "changed"}.get(setting.get("same_ranking"), "--"),
            _cell(setting.get("max_shift")),
        ]
        for setting in data["sensitivity"].get("settings", [])
    ]
    caption = (
        f"Filter sensitivity on {data.get('dataset', '')}: annotators and ratings each rater filter keeps, "
        "the best metric by Pearson r, and whether the metrics' order changes from the study's settings."
    )
    return caption, "tab:filter-sensitivity", header, rows


def latex(data):
    return [tabular(*latex_sensitivity(data, latex_escape))] if data.get("sensitivity") else []


SECTION = Section(
    name="sensitivity",
    keys=("sensitivity",),
    compute=compute,
    applies=with_ratings,
    template="analysis/sections/sensitivity.html",
    present=present,
    nav=nav,
    tables={"sensitivity": sensitivity_export},
    latex=latex,
)
