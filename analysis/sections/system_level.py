"""Per-system correlations and per-system means: each system's mean human score against its mean
metric scores, resampled by Boot-Both (systems and contexts together)."""

from analysis import stats
from analysis.report.cells import Estimate, count, interval, number, plural
from analysis.report.display import Column, DisplayTable
from analysis.report.inputs import response_contexts
from analysis.report.latex import latex_escape_tt, tabular
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings
from analysis.sections.correlations import (
    CORRELATION_COLUMNS,
    EXPORT_COLUMNS,
    LATEX_HEADER,
    bootstrap_samples,
    correlation_rows,
    export_rows,
    latex_rows,
)
from analysis.sections.signatures import latex_signatures, signed

SYSTEM_COLUMNS = [
    *CORRELATION_COLUMNS[:-3],
    Column("Kendall τ-b", True),
    Column("95% CI", True),
    Column("p", True),
    Column("n", True),
]
SYSTEM_EXTRA_COLUMNS = [
    "kendall_ci_low",
    "kendall_ci_high",
    "pearson_p_bootboth",
    "spearman_p_bootboth",
    "kendall_p_bootboth",
]


def compute(context):
    inputs = context.inputs
    result = stats.system_level(
        inputs.human, inputs.metrics, inputs.systems, contexts=response_contexts(inputs), n_boot=context.n_boot,
        seed=context.seed,
    )  # fmt: skip
    return {"system_level": result["correlations"], "systems": result["systems"]}


def system_table(data):
    k = data.get("n_systems", 0)
    return DisplayTable(
        name="system_level",
        title="Per-system correlations",
        download="per-system correlations",
        columns=SYSTEM_COLUMNS,
        rows=correlation_rows(data.get("system_level", []), p_suffix="_bootboth", kendall_ci=True),
        note=(
            f"The {plural(k, 'system')}' mean human score against their mean metric score: n = {k} systems. "
            f"Resampled: the systems and the contexts together (Boot-Both, Deutsch et al. 2021; "
            f"{bootstrap_samples(data):,} resamples): each resample draws systems with replacement and contexts "
            "with replacement, and recomputes every system's means over its responses to the drawn contexts. p: "
            "share of resamples on the far side of 0, doubled, so an interval excludes 0 exactly when p < 0.05. "
            "With few systems these intervals are wide: that is the honest uncertainty of a system ranking. The "
            "classical t-test p-values (systems as the sample) are in the exports."
        ),
        empty="Needs at least three systems with rated responses.",
    )


def systems_table(data):
    """Per-system means transposed: systems as columns, human and each metric as rows."""
    systems = data.get("systems", [])
    columns = [Column("Measure")] + [Column(row["system"], True) for row in systems]
    rows = [["Responses (n)"] + [count(row["n"]) for row in systems]]
    rows.append(
        ["Human"] + [Estimate(number(row["human_mean"], 2), interval(row["human_ci_low"], row["human_ci_high"], 2))
                     for row in systems]
    )  # fmt: skip
    for metric in data.get("metrics", []):
        cells = []
        for row in systems:
            values = row["metrics"].get(metric) or {}
            cells.append(Estimate(number(values.get("mean")), interval(values.get("ci_low"), values.get("ci_high"))))
        rows.append([metric, *cells])
    return DisplayTable(
        name="systems",
        title="Per-system means",
        download="per-system means",
        columns=columns,
        rows=rows if systems else [],
        note=(
            "Mean of each measure over a system's rated responses, with a 95% CI from a percentile bootstrap "
            f"over that system's responses ({bootstrap_samples(data):,} resamples)."
        ),
        empty="No rated responses.",
    )


def system_export(data):
    return signed(data, export_rows(data.get("system_level", []), EXPORT_COLUMNS + SYSTEM_EXTRA_COLUMNS))


def systems_export(data):
    metrics = data.get("metrics", [])
    header = ["system", "n", "human_mean", "human_ci_low", "human_ci_high"]
    for metric in metrics:
        header += [f"{metric}_mean", f"{metric}_ci_low", f"{metric}_ci_high"]
    rows = []
    for system in data.get("systems", []):
        row = [system[c] for c in header[:5]]
        for metric in metrics:
            values = system["metrics"].get(metric, {})
            row += [values.get("mean"), values.get("ci_low"), values.get("ci_high")]
        rows.append(row)
    return header, rows


def latex(data):
    if not data.get("system_level"):
        return []
    return [
        tabular(
            f"Correlation between metrics and human judgements across systems on {data.get('dataset', '')}.",
            "tab:system-level",
            LATEX_HEADER,
            latex_rows(data["system_level"]),
            latex_signatures(data, latex_escape_tt),
        )
    ]


SECTION = Section(
    name="system_level",
    keys=("system_level", "systems"),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(system_table, systems_table, signed=True),
    nav=tables_nav,
    page_tables={"system_level": system_table, "systems": systems_table},
    tables={"system_level": system_export, "systems": systems_export},
    latex=latex,
)
