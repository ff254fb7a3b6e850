"""Per-response correlations: each metric against the mean accepted human score of each response,
with bootstrap intervals (the report's first table of figures, and its first LaTeX table, which ends
with the human split-half ceiling)."""

from analysis import stats
from analysis.report.cells import count, interval, number, p_value, plural
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import footnotes, latex_escape, latex_escape_tt, p_cell, tabular
from analysis.report.latex import number as latex_number
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings
from analysis.sections.learned import trained_here_latex, trained_here_note
from analysis.sections.signatures import latex_signatures, signed

# The page's columns (shared with the per-system correlations).
CORRELATION_COLUMNS = [
    Column("Metric"),
    Column("Pearson r", True),
    Column("95% CI", True),
    Column("p", True),
    Column("Spearman ρ", True),
    Column("95% CI", True),
    Column("p", True),
    Column("Kendall τ-b", True),
    Column("p", True),
    Column("n", True),
]
# The CSV's columns (shared likewise).
EXPORT_COLUMNS = [
    "metric",
    "pearson",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "spearman",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "kendall",
    "kendall_p",
    "n",
]
LATEX_HEADER = ["Metric", "Pearson", "$p$", "Spearman", "$p$", "Kendall", "$p$", "$n$"]


def compute(context):
    inputs = context.inputs
    return {"utterance_level": stats.utterance_level(inputs.human, inputs.metrics, n_boot=context.n_boot,
                                                     seed=context.seed)}  # fmt: skip


def correlation_rows(records, *, p_suffix="", kendall_ci=False):
    """The page's rows; p_suffix "_bootboth": the p-values read off the Boot-Both resamples that give the CIs."""
    return [
        [
            row["metric"],
            number(row.get("pearson")),
            interval(row.get("pearson_ci_low"), row.get("pearson_ci_high")),
            p_value(row.get(f"pearson_p{p_suffix}")),
            number(row.get("spearman")),
            interval(row.get("spearman_ci_low"), row.get("spearman_ci_high")),
            p_value(row.get(f"spearman_p{p_suffix}")),
            number(row.get("kendall")),
            *([interval(row.get("kendall_ci_low"), row.get("kendall_ci_high"))] if kendall_ci else []),
            p_value(row.get(f"kendall_p{p_suffix}")),
            count(row.get("n")),
        ]
        for row in records
    ]


def bootstrap_samples(data):
    return (data.get("method") or {}).get("bootstrap_samples", 0)


def utterance_table(data):
    n = data.get("n_responses", 0)
    boot = bootstrap_samples(data)
    ci = (
        f"95% CIs: percentile bootstrap over the {n:,} responses ({boot:,} resamples, seed {data['method']['seed']})"
        if boot
        else "no CIs (bootstrap switched off)"
    )
    return DisplayTable(
        name="utterance_level",
        title="Per-response correlations",
        download="per-response correlations",
        columns=CORRELATION_COLUMNS,
        rows=correlation_rows(data.get("utterance_level", [])),
        note=(
            f"Each metric against the mean accepted human score of each of {plural(n, 'response')} "
            f"(n: responses the metric scores). p: two-sided test of no correlation. {ci}. " + trained_here_note(data)
        ).strip(),
        empty="No metric scores yet: compute metrics for this dataset first.",
    )


def export_rows(records, columns):
    return columns, [[record.get(column) for column in columns] for record in records]


def utterance_export(data):
    return signed(data, export_rows(data.get("utterance_level", []), EXPORT_COLUMNS))


def latex_rows(records):
    return [
        [
            latex_escape(r["metric"]),
            latex_number(r["pearson"]),
            p_cell(r["pearson_p"]),
            latex_number(r["spearman"]),
            p_cell(r["spearman_p"]),
            latex_number(r.get("kendall")),
            p_cell(r.get("kendall_p")),
            str(r["n"]),
        ]
        for r in records
    ]


def latex(data):
    """The utterance-level table, the human split-half ceiling as its last row (always written)."""
    rows = latex_rows(data.get("utterance_level", []))
    ceiling = data.get("human_ceiling") or {}
    if ceiling.get("pearson") is not None:
        rows.append(
            [r"\textit{Human (split-half)}", latex_number(ceiling["pearson"]), "--",
             latex_number(ceiling.get("spearman")), "--", "--", "--",
             str(int(ceiling.get("n_items_mean") or ceiling.get("n") or 0) or "--")]
        )  # fmt: skip
    name = data.get("dataset", "")  # escaped with the whole caption
    return [
        tabular(
            f"Correlation between automatic metrics and human judgements on {name} (utterance level).",
            "tab:utterance-level",
            LATEX_HEADER,
            rows,
            footnotes(latex_signatures(data, latex_escape_tt), trained_here_latex(data)),
        )
    ]


SECTION = Section(
    name="correlations",
    keys=("utterance_level",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(utterance_table, signed=True),
    nav=tables_nav,
    page_tables={"utterance_level": utterance_table},
    tables={"utterance_level": utterance_export},
    latex=latex,
)
