"""WMT's meta-evaluation statistics (issue 39; `analysis.stats.spa`): soft pairwise accuracy (SPA)
of each metric's system ranking, Pairwise Difference Pearson (PDP) of its item-level differences,
and the metrics ranked as WMT24/25 rank them (significance clusters under SPA and under acc*_eq,
ordered by the average of the two cluster ranks), beside today's Pearson-based clusters.

Items are the report's contexts (every system answers one); the humans' score of a response is
the mean of its ratings in this report's population.
"""

import importlib
from statistics import median

from analysis.report.cells import number
from analysis.report.display import Column, DisplayTable
from analysis.report.inputs import response_contexts
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.report.population import population_clause
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings

MAX_PERMUTATIONS = 1000  # mt-metrics-eval's k (analysis.stats.wmt_ranking.MAX_PERMUTATIONS)


def ranking_permutations(n_perm):
    """The most permutations a test between two metrics may use: the report's setting, at most
    mt-metrics-eval's k of 1,000 (early stopping usually ends a test after 100)."""
    return min(n_perm, MAX_PERMUTATIONS)


RANKING_COLUMNS = ["metric", "spa", "spa_rank", "acc_eq", "acc_eq_rank", "average_rank", "pearson_cluster"]


def spa_stats():
    return importlib.import_module("analysis.stats.spa")


def ranking_stats():
    return importlib.import_module("analysis.stats.wmt_ranking")


def compute(context):
    inputs = context.inputs
    if inputs.human.size == 0 or not inputs.metrics:
        return {"spa": [], "pdp": [], "wmt_ranking": {"rows": [], "permutations": 0, "tests": []}}
    stats = spa_stats()
    items = response_contexts(inputs)
    human_matrix, _, item_labels = stats.score_matrix(inputs.human, inputs.systems, items)
    signs = stats.permutation_signs(item_labels.size)
    spa, pdp = [], []
    for name, values in inputs.metrics.items():
        metric_matrix = stats.score_matrix(values, inputs.systems, items)[0]
        spa.append({"metric": name, **stats.soft_pairwise_accuracy(human_matrix, metric_matrix, signs=signs)})
        pdp.append({"metric": name, **stats.pairwise_difference_pearson(inputs.human, values, items)})
    n_perm = ranking_permutations(context.n_perm)
    rows, tests = [], []
    if n_perm > 0 and len(inputs.metrics) >= 2:
        rows, tests = ranking_stats().wmt_ranking_with_tests(
            inputs.human, inputs.metrics, inputs.systems, items, n_perm=n_perm, seed=context.seed
        )
        clusters = context.part("ranking")["clusters"]
        for row in rows:
            row["pearson_cluster"] = clusters.get(row["metric"])
    return {"spa": spa, "pdp": pdp, "wmt_ranking": {"rows": rows, "permutations": n_perm, "tests": tests}}


def _by_metric(records):
    return {row["metric"]: row for row in records or []}


def statistics_table(data):
    spa, pdp = _by_metric(data.get("spa")), _by_metric(data.get("pdp"))
    rows = [
        [
            name,
            number(spa[name]["spa"]),
            f"{spa[name]['n_pairs']:,}",
            number(pdp.get(name, {}).get("pdp")),
            f"{pdp.get(name, {}).get('n_pairs', 0):,}",
        ]
        for name in spa
    ]
    return DisplayTable(
        name="wmt_statistics",
        title="WMT statistics: soft pairwise accuracy and pairwise difference Pearson",
        download="SPA and PDP",
        columns=[
            Column("Metric"),
            Column("SPA", True),
            Column("System pairs", True),
            Column("PDP", True),
            Column("Response pairs", True),
        ],
        rows=rows,
        note="SPA (Thompson et al. 2024): 1 − mean |p_human − p_metric| over system pairs, each p from a paired "
        "permutation test on the contexts both systems answer (1,000 sign flips, seed 4, as mt-metrics-eval). PDP "
        "(DiIanni & Deutsch 2025): Pearson r of human and metric differences between responses to the same context. "
        f"On {population_clause(data)}.",
        empty="Needs rated responses and metric scores.",
    )


def ranking_table(data):
    ranking = data.get("wmt_ranking") or {}
    rows = [
        [
            row["metric"],
            number(row["average_rank"], 1),
            number(row["spa"]),
            str(row["spa_rank"] or "–"),
            number(row["acc_eq"]),
            str(row["acc_eq_rank"] or "–"),
            str(row.get("pearson_cluster") or "–"),
        ]
        for row in ranking.get("rows", [])
    ]
    return DisplayTable(
        name="wmt_ranking",
        title="Metrics ranked as WMT ranks them (SPA and acc*_eq clusters)",
        download="WMT ranking",
        columns=[
            Column("Metric"),
            Column("Average rank", True),
            Column("SPA", True),
            Column("SPA cluster", True),
            Column("acc*_eq", True),
            Column("acc*_eq cluster", True),
            Column("Pearson cluster", True),
        ],
        rows=rows,
        note="Per statistic, metrics fall into clusters that a one-sided test at p < 0.05 cannot tell apart, as "
        "mt-metrics-eval tests them: SPA by PERM-BOTH (the two metrics' z-scored scores of a response swapped), "
        "acc*_eq by swapping the two metrics' verdicts on a pair of responses, each metric at its own tie threshold. "
        f"Up to {ranking.get('permutations', 0):,} permutations a test, in blocks of 100, stopping once p < 0.02 or "
        f"p > 0.5{_used(ranking)}. The ranking is by the average of the two cluster ranks (WMT24/25). Pearson "
        "cluster: the ranking above, for comparison. "
        f"On {population_clause(data)}.",
        empty="Needs at least two metrics and the permutations switched on.",
    )


def _used(ranking):
    used = [test["permutations"] for test in ranking.get("tests") or []]
    if not used:
        return ""
    text = f" ({len(used):,} tests used {min(used):,}–{max(used):,} permutations, median {int(median(used)):,})"
    unsettled = [test for test in ranking.get("tests") or [] if not test.get("settled", True)]
    if unsettled:
        text += (
            f"; the report's compute budget ended {len(unsettled):,} undecided test(s) before k, so their p rests on "
            "fewer permutations"
        )
    return text


def _export(columns, records):
    return columns, [[record.get(column) for column in columns] for record in records or []]


def latex(data):
    rows = (data.get("wmt_ranking") or {}).get("rows") or []
    if not rows:
        return []
    cells = [
        [
            latex_escape(row["metric"]),
            latex_number(row["average_rank"], 1),
            latex_number(row["spa"]),
            str(row["spa_rank"] or "--"),
            latex_number(row["acc_eq"]),
            str(row["acc_eq_rank"] or "--"),
        ]
        for row in rows
    ]
    caption = (
        f"Metrics on {data.get('dataset', '')} ranked by the average of their significance-cluster ranks under soft "
        "pairwise accuracy and acc*_eq (WMT24/25 style)."
    )
    header = ["Metric", "Avg. rank", "SPA", "Cluster", "acc*\\_eq", "Cluster"]
    return [tabular(caption, "tab:wmt-ranking", header, cells)]


SECTION = Section(
    name="wmt",
    keys=("spa", "pdp", "wmt_ranking"),
    compute=compute,
    applies=with_ratings,
    template=TABLES_TEMPLATE,
    present=tables_present(statistics_table, ranking_table),
    nav=tables_nav,
    page_tables={"wmt_statistics": statistics_table, "wmt_ranking": ranking_table},
    tables={
        "wmt_spa": lambda data: _export(["metric", "spa", "n_pairs"], data.get("spa")),
        "wmt_pdp": lambda data: _export(["metric", "pdp", "n_pairs"], data.get("pdp")),
        "wmt_ranking": lambda data: _export(RANKING_COLUMNS, (data.get("wmt_ranking") or {}).get("rows")),
    },
    latex=latex,
)
