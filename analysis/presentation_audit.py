"""The filter-sensitivity section and the metric signatures as the report page shows them.

Kept apart from `presentation` (the report's other tables) so each section reads on its own;
the shapes are the same `DisplayTable`s, drawn by the same include.
"""

from analysis.cells import Estimate, count, interval, number, plural
from analysis.presentation import Column, DisplayTable

# The tables under which the page prints the metric signatures (tables of metrics' figures).
SIGNED_TABLES = (
    "utterance_level",
    "system_level",
    "systems",
    "williams",
    "length_bias",
    "stopwords",
    "failure_analysis",
)


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


def pairwise_sensitivity_display(data):
    """The pairwise audit's table, or None when the report has none (no pairwise survey, or older)."""
    if not (data or {}).get("pairwise_sensitivity"):
        return None
    return pairwise_sensitivity_table(data)


def sensitivity_display(data):
    """The section's two tables, or None when the report has no audit (computed before it existed)."""
    if not (data or {}).get("sensitivity"):
        return None
    return {"summary": sensitivity_table(data), "metrics": sensitivity_metrics_table(data)}


def signature_lines(data):
    """`[(metric, signature)]` of the report's metrics, in the report's order."""
    signatures = (data or {}).get("signatures") or {}
    return [(metric, signatures[metric]) for metric in (data or {}).get("metrics", []) if metric in signatures]
