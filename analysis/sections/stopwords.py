"""Each metric next to its variant computed without stopwords and punctuation (Liu et al. 2016,
Table 4), where both were computed."""

from analysis import stats
from analysis.report.cells import count, number, p_value
from analysis.report.display import Column, DisplayTable
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings

# Metric names that mark a "without stopwords and punctuation" variant of another metric
# (Liu et al. Table 4). The metrics registry names variants with one of these.
STOPWORD_SUFFIXES = ("_nostop", "_no_stopwords", "_nostopwords", ":nostop", "-nostop")


def stopword_pairs(names):
    """(metric, variant) pairs where both a metric and its no-stopword variant were computed."""
    names = set(names)
    pairs = []
    for name in sorted(names):
        for suffix in STOPWORD_SUFFIXES:
            if name.endswith(suffix) and name[: -len(suffix)] in names:
                pairs.append((name[: -len(suffix)], name))
    return pairs


def compute(context):
    inputs = context.inputs
    return {"stopwords": stats.stopword_table(inputs.human, inputs.metrics, stopword_pairs(inputs.metrics))}


STOPWORD_COLUMNS = [
    Column(label, numeric=i >= 2)
    for i, label in enumerate(
        ["Metric", "Variant", "Pearson r (with)", "p", "Pearson r (without)", "p", "Spearman ρ (with)",
         "Spearman ρ (without)", "n"]
    )
]  # fmt: skip


def stopwords_table(data):
    rows = [
        [row["metric"], row["variant"], number(row["pearson_with"]), p_value(row["pearson_p_with"]),
         number(row["pearson_without"]), p_value(row["pearson_p_without"]), number(row["spearman_with"]),
         number(row["spearman_without"]), count(row["n_with"])]
        for row in data.get("stopwords", [])
    ]  # fmt: skip
    return DisplayTable(
        name="stopwords",
        title="With and without stopwords and punctuation",
        download="stopword comparison",
        columns=STOPWORD_COLUMNS,
        rows=rows,
        note="Each metric next to its variant computed without stopwords and punctuation (Liu et al. 2016, Table 4).",
        empty='No metric has a variant without stopwords (a metric named like "bleu2_nostop").',
    )


def stopwords_export(data):
    columns = ["metric", "variant"]
    for label in ("with", "without"):
        columns += [f"{key}_{label}" for key in ("pearson", "pearson_p", "spearman", "spearman_p", "mean", "n")]
    return columns, [[record.get(column) for column in columns] for record in data.get("stopwords", [])]


SECTION = Section(
    name="stopwords",
    keys=("stopwords",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(stopwords_table, signed=True),
    nav=tables_nav,
    page_tables={"stopwords": stopwords_table},
    tables={"stopwords": stopwords_export},
)
