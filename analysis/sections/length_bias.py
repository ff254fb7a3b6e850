"""Length bias: do the humans and the metrics score responses whose length is close to the
reference's differently from those far from it (Welch's t and Mann-Whitney U)?"""

from analysis import stats
from analysis.report.cells import count, number, p_value
from analysis.report.display import Column, DisplayTable
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings

EXPORT_COLUMNS = ["measure", "n_short", "mean_short", "n_long", "mean_long", "welch_t", "welch_p", "mannwhitney_u",
                  "mannwhitney_p"]  # fmt: skip


def compute(context):
    inputs = context.inputs
    return {"length_bias": stats.length_bias(inputs.delta_words, inputs.human, inputs.metrics)}


def length_table(data):
    bias = data.get("length_bias") or {}
    threshold = bias.get("threshold", 6)
    rows = [
        [row["measure"], count(row["n_short"]), number(row["mean_short"]), count(row["n_long"]),
         number(row["mean_long"]), number(row["welch_t"]), p_value(row["welch_p"]),
         number(row["mannwhitney_u"], 1), p_value(row["mannwhitney_p"])]
        for row in bias.get("rows", [])
    ]  # fmt: skip
    return DisplayTable(
        name="length_bias",
        title=f"Length bias: |Δwords| ≤ {threshold} vs > {threshold}",
        download="length bias",
        columns=[
            Column("Measure"),
            Column(f"n (≤ {threshold})", True),
            Column("Mean", True),
            Column(f"n (> {threshold})", True),
            Column("Mean", True),
            Column("Welch t", True),
            Column("p", True),
            Column("Mann-Whitney U", True),
            Column("p", True),
        ],
        rows=rows,
        note=(
            "Δwords: difference in word count between the response and the first reference. Welch's t-test "
            "and the Mann-Whitney U test of the difference between the two groups, both two-sided."
        ),
        empty="No response has a reference to compare its length with.",
    )


def length_export(data):
    rows = data.get("length_bias", {}).get("rows", [])
    return EXPORT_COLUMNS, [[record.get(column) for column in EXPORT_COLUMNS] for record in rows]


SECTION = Section(
    name="length_bias",
    keys=("length_bias",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(length_table, signed=True),
    nav=tables_nav,
    page_tables={"length_bias": length_table},
    tables={"length_bias": length_export},
)
