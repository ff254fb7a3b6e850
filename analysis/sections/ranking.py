"""Meta-evaluation's headline (issue 20): which metric to trust. Metrics ranked by per-response
Pearson r and grouped into clusters that paired permutation tests cannot tell apart; the tests of
every pair behind a toggle, in the CSV and, for the ranking, the first LaTeX table."""

from analysis.report.cells import count, interval, number, p_value, plural
from analysis.report.display import Column, DisplayTable
from analysis.report.latex import latex_escape, tabular
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings
from analysis.sections.learned import trained_here_latex, trained_here_note
from analysis.stats.permutation import permutation_tests, significance_clusters

ALPHA = 0.05
PERMUTATION_ROWS = 120  # pairs inside the ranking's "every pair" toggle (15 metrics: 105)
RANKING_COLUMNS = ["metric", "cluster", "pearson", "pearson_ci_low", "pearson_ci_high", "n"]
PERMUTATION_COLUMNS = ["a", "b", "r_a", "r_b", "delta", "n", "p", "p_two_sided"]


def compute(context):
    """`clusters` ({metric: its cluster's rank}) and `significance` (the ranking, the tests, the method).

    Permutations are switched off with the bootstrap (n_boot=0: quick reports in tests)."""
    utterance_rows = context.part("correlations")["utterance_level"]
    section = clusters_section(context.inputs, utterance_rows, n_perm=context.n_perm, seed=context.seed)
    return {"clusters": section.pop("clusters"), "significance": section}


def clusters_section(inputs, utterance_rows, *, n_perm, seed):
    """Paired permutation tests between every two metrics and the clusters they give.

    Ranked by per-response Pearson r (the statistic the tests compare); `clusters` maps each
    metric to the rank of its cluster, `ranking` lists them best first with their r and CI.
    """
    tests = permutation_tests(inputs.human, inputs.metrics, n_perm=n_perm, seed=seed) if n_perm > 0 else []
    correlations = {row["metric"]: row["pearson"] for row in utterance_rows}
    clusters = significance_clusters(correlations, tests, alpha=ALPHA) if tests else {}
    by_name = {row["metric"]: row for row in utterance_rows}
    ranking = [
        {
            "metric": name,
            "cluster": rank,
            "pearson": by_name[name]["pearson"],
            "pearson_ci_low": by_name[name].get("pearson_ci_low"),
            "pearson_ci_high": by_name[name].get("pearson_ci_high"),
            "n": by_name[name]["n"],
        }
        for name, rank in clusters.items()
    ]
    return {
        "clusters": clusters,
        "ranking": ranking,
        "permutation_tests": tests,
        "method": {
            "test": "paired permutation test on the difference of per-response Pearson r (scores standardised, "
            "swapped per response between the two metrics)",
            "permutations": n_perm,
            "seed": seed,
            "alpha": ALPHA,
            "clustering": "ranked by r; a metric opens a new cluster when a metric of the current cluster beats "
            "it at one-sided p < alpha",
        },
    }


def _significance(data):
    return data.get("significance") or {}


def permutation_table(data):
    tests = _significance(data).get("permutation_tests", [])
    return DisplayTable(
        name="permutation_tests",
        title=f"Paired permutation tests, every pair of metrics ({plural(len(tests), 'pair')})",
        download="permutation tests, every pair",
        columns=[
            Column("Metric a"),
            Column("Metric b"),
            Column("r (a)", True),
            Column("r (b)", True),
            Column("Difference", True),
            Column("n", True),
            Column("p (a > b)", True),
            Column("p (two-sided)", True),
        ],
        rows=[
            [
                row["a"],
                row["b"],
                number(row["r_a"]),
                number(row["r_b"]),
                number(row["delta"]),
                count(row["n"]),
                p_value(row["p"]),
                p_value(row["p_two_sided"]),
            ]
            for row in tests
        ],
        note="Each pair named so that metric a has the higher r on the responses both score; p (a > b) is one-sided.",
    )


def ranking_table(data):
    """The headline: metrics best first, grouped into clusters the data cannot tell apart."""
    significance = _significance(data)
    method = significance.get("method") or {}
    ranking = significance.get("ranking", [])
    full = permutation_table(data)
    full.total_rows = len(full.rows)
    full.rows = full.rows[:PERMUTATION_ROWS]
    n_clusters = len({row["cluster"] for row in ranking})
    return DisplayTable(
        name="ranking",
        title="Which metric to trust: ranking with significance clusters",
        download="ranking with clusters",
        columns=[
            Column("Cluster", True),
            Column("Metric"),
            Column("Pearson r", True),
            Column("95% CI", True),
            Column("n", True),
        ],
        rows=[
            [
                str(row["cluster"]),
                row["metric"],
                number(row["pearson"]),
                interval(row["pearson_ci_low"], row["pearson_ci_high"]),
                count(row["n"]),
            ]
            for row in ranking
        ],
        note=(
            f"Metrics ranked by per-response Pearson r with the human score, in {plural(n_clusters, 'cluster')}: "
            "metrics in one cluster are not significantly different. A metric starts a new cluster when a metric "
            "of the cluster above it beats it in a paired permutation test (scores standardised and swapped "
            f"between the two metrics per response; {method.get('permutations', 0):,} permutations, seed "
            f"{method.get('seed', 0)}, one-sided p < {method.get('alpha', 0.05):g}). Williams' test below is a "
            "second, parametric check. " + trained_here_note(data)
        ).strip(),
        empty="Needs at least two metrics and the bootstrap switched on.",
        full=full if full.rows else None,
    )


def _rows(records, columns):
    return columns, [[record.get(column) for column in columns] for record in records]


def ranking_export(data):
    return _rows(_significance(data).get("ranking", []), RANKING_COLUMNS)


def permutation_export(data):
    return _rows(_significance(data).get("permutation_tests", []), PERMUTATION_COLUMNS)


def latex(data):
    """The headline ranking: cluster (a number), then the metric's name, then the numbers."""
    ranking = _significance(data).get("ranking", [])
    if not ranking:
        return []
    rows = [
        [str(row["cluster"]), row["metric"], "--" if row["pearson"] is None else f"{row['pearson']:.3f}", str(row["n"])]
        for row in ranking
    ]
    method = _significance(data).get("method") or {}
    caption = (
        f"Metrics ranked by correlation with human judgements on {data.get('dataset', '')}, grouped into clusters "
        f"not significantly different (paired permutation test, {method.get('permutations', 0)} permutations, "
        f"p < {method.get('alpha', 0.05)})."
    )
    header = ["Cluster", "Metric", "Pearson", "$n$"]
    cells = [[latex_escape(cell) for cell in row] for row in rows]
    columns = "rl" + "r" * (len(header) - 2)
    return [tabular(caption, "tab:metric-clusters", header, cells, trained_here_latex(data), columns=columns)]


SECTION = Section(
    name="ranking",
    keys=("clusters", "significance"),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(ranking_table),
    nav=tables_nav,
    page_tables={"ranking": ranking_table},
    full_tables={"ranking": permutation_table},  # "show all" under the ranking: every permutation-tested pair
    tables={"ranking": ranking_export, "permutation_tests": permutation_export},
    latex=latex,
)
