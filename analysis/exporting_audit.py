"""Exports of the filter-sensitivity audit and the metric signatures (CSV tables and LaTeX parts).

`exporting` assembles them with the report's other tables; nothing here imports it (it passes
its LaTeX escaper in), so the two modules stay one-way.
"""

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


def signature_of(data, metric):
    return ((data or {}).get("signatures") or {}).get(metric)


def signed(data, header_rows):
    """A table whose rows start with a metric name, with that metric's signature as a last column."""
    header, rows = header_rows
    return [*header, "signature"], [[*row, signature_of(data, row[0])] for row in rows]


def sensitivity_table(data):
    rows = (data.get("sensitivity") or {}).get("rows", [])
    return SENSITIVITY_COLUMNS, [[row.get(column) for column in SENSITIVITY_COLUMNS] for row in rows]


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


def pairwise_sensitivity_table(data):
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


def signatures_table(data):
    signatures = data.get("signatures") or {}
    return ["metric", "signature"], [
        [metric, signatures[metric]] for metric in data.get("metrics", []) if metric in signatures
    ]


AUDIT_TABLES = {
    "sensitivity": sensitivity_table,
    "pairwise_sensitivity": pairwise_sensitivity_table,
    "signatures": signatures_table,
}


def latex_signatures(data, escape):
    """A footnote under a table listing its metrics' signatures (empty when there are none)."""
    signatures = [signature_of(data, metric) for metric in data.get("metrics", [])]
    signatures = [signature for signature in signatures if signature]
    if not signatures:
        return ""
    listed = "; ".join(rf"\texttt{{{escape(signature)}}}" for signature in signatures)
    return rf"\par\smallskip{{\footnotesize Metric signatures: {listed}.}}"


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
