"""Williams' test: does the best metric correlate better with the humans than each other metric?
(Williams 1959: two correlations sharing the human score.)"""

from analysis import stats
from analysis.report.cells import count, number, p_value, plural
from analysis.report.display import Column, DisplayTable
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings

# Williams pairs inside the report page's "every pair" toggle (15 metrics: 105 pairs).
FULL_WILLIAMS_ROWS = 120
EXPORT_COLUMNS = ["a", "b", "r_a", "r_b", "r_ab", "n", "t", "p", "p_two_sided"]


def compute(context):
    return {"williams": stats.pairwise_williams(context.inputs.human, context.inputs.metrics)}


WILLIAMS_FULL_COLUMNS = [
    Column("Metric a"),
    Column("Metric b"),
    Column("r (a)", True),
    Column("r (b)", True),
    Column("r (a, b)", True),
    Column("n", True),
    Column("t", True),
    Column("p (a > b)", True),
    Column("p (two-sided)", True),
]


def _williams_row(row):
    return [
        row["a"],
        row["b"],
        number(row["r_a"]),
        number(row["r_b"]),
        number(row["r_ab"]),
        count(row["n"]),
        number(row["t"]),
        p_value(row["p"]),
        p_value(row["p_two_sided"]),
    ]


def best_metric(data):
    """The metric with the highest per-response Pearson r (None when no metric has one)."""
    rows = [row for row in data.get("utterance_level", []) if row.get("pearson") is not None]
    return max(rows, key=lambda row: row["pearson"])["metric"] if rows else None


def williams_full_table(data):
    pairs = data.get("williams", [])
    return DisplayTable(
        name="williams",
        title=f"Williams' test, every pair of metrics ({plural(len(pairs), 'pair')})",
        download="Williams' test, every pair",
        columns=WILLIAMS_FULL_COLUMNS,
        rows=[_williams_row(row) for row in pairs],
        note="Each pair named so that metric a has the higher Pearson r; p (a > b) is one-sided.",
    )


def williams_table(data):
    """The best metric against each other metric; every pair behind a toggle (and in the CSV)."""
    pairs = data.get("williams", [])
    best = best_metric(data)
    compact = []
    for row in pairs:
        if best not in (row["a"], row["b"]):
            continue
        other = row["b"] if row["a"] == best else row["a"]
        better = row["a"] == best
        verdict = "yes" if better and row["p"] is not None and row["p"] < 0.05 else "no"
        compact.append(
            [other, number(row["r_a"] if better else row["r_b"]), number(row["r_b"] if better else row["r_a"]),
             number(row["t"] if better else -row["t"] if row["t"] is not None else None),
             p_value(row["p"] if better else 1 - row["p"] if row["p"] is not None else None), verdict]
        )  # fmt: skip
    full = williams_full_table(data)
    full.rows = full.rows[:FULL_WILLIAMS_ROWS]
    return DisplayTable(
        name="williams",
        title=f"Williams' test: does {best or 'the best metric'} correlate better than each other metric?",
        download="Williams' test, every pair",
        columns=[
            Column("Other metric"),
            Column(f"r ({best})", True),
            Column("r (other)", True),
            Column("t", True),
            Column(f"p ({best} > other)", True),
            Column("Better at 5%?"),
        ],
        rows=compact,
        note=(
            f"{best} has the highest per-response Pearson r. Williams' (1959) t for two correlations sharing the "
            "human score, on the responses both metrics score (df = n − 3); p is one-sided. "
            "The full table lists every pair, each named so that metric a has the higher r."
        ),
        empty="Needs at least two metrics scored on more than three responses.",
        full=full if pairs else None,
    )


def williams_export(data):
    return EXPORT_COLUMNS, [[record.get(column) for column in EXPORT_COLUMNS] for record in data.get("williams", [])]


SECTION = Section(
    name="williams",
    keys=("williams",),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(williams_table, signed=True),
    nav=tables_nav,
    page_tables={"williams": williams_table},
    full_tables={"williams": williams_full_table},  # "show all" under the compact table: every pair
    tables={"williams": williams_export},
)
