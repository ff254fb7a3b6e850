"""WMT's meta-evaluation statistics (issue 39; `analysis.stats.spa`): soft pairwise accuracy (SPA)
of each metric's system ranking, Pairwise Difference Pearson (PDP) of its item-level differences,
and the metrics ranked as WMT24/25 rank them (significance clusters under SPA and under acc*_eq,
ordered by the average of the two cluster ranks), beside today's Pearson-based clusters.

Items are the report's contexts (every system answers one); the humans' score of a response is
the mean of its ratings in this report's population.
"""

import importlib

from analysis.report.cells import number
from analysis.report.display import Column, DisplayTable
from analysis.report.inputs import response_contexts
from analysis.report.latex import latex_escape, tabular
from analysis.report.latex import number as latex_number
from analysis.report.population import population_clause
from analysis.sections.base import TABLES_TEMPLATE, Section, tables_nav, tables_present, with_ratings

# PERM-BOTH recomputes SPA (itself 1,000 sign flips) and acc*_eq for both metrics of a pair in
# every permutation: at 1,000 contexts x 8 systems that is ~0.1 s a permutation (measured under
# load). The ranking therefore takes the MAX_RANKING_METRICS best metrics by SPA, and at most
# PERMUTATION_BUDGET permutations over all their pairs (never fewer than MIN_RANKING_PERMUTATIONS a
# pair, never more than the report's setting or MAX_RANKING_PERMUTATIONS); the table says so.
MAX_RANKING_METRICS = 8
MAX_RANKING_PERMUTATIONS = 200
MIN_RANKING_PERMUTATIONS = 20
PERMUTATION_BUDGET = 1_000


def ranking_permutations(n_perm, n_metrics):
    pairs = max(n_metrics * (n_metrics - 1) // 2, 1)
    return min(n_perm, MAX_RANKING_PERMUTATIONS, max(PERMUTATION_BUDGET // pairs, MIN_RANKING_PERMUTATIONS))


def ranked_metrics(spa_rows):
    """The metrics the WMT ranking tests: the best MAX_RANKING_METRICS by SPA (those without one last)."""
    ordered = sorted(spa_rows, key=lambda row: (row["spa"] is None, -(row["spa"] or 0.0), row["metric"]))
    return [row["metric"] for row in ordered[:MAX_RANKING_METRICS]]


RANKING_COLUMNS = ["metric", "spa", "spa_rank", "acc_eq", "acc_eq_rank", "average_rank", "pearson_cluster"]


def spa_stats():
    return importlib.import_module("analysis.stats.spa")


def compute(context):
    inputs = context.inputs
    if inputs.human.size == 0 or not inputs.metrics:
        return {"spa": [], "pdp": [], "wmt_ranking": {"rows": [], "permutations": 0, "left_out": []}}
    stats = spa_stats()
    items = response_contexts(inputs)
    human_matrix, _, item_labels = stats.score_matrix(inputs.human, inputs.systems, items)
    signs = stats.permutation_signs(item_labels.size)
    spa, pdp = [], []
    for name, values in inputs.metrics.items():
        metric_matrix = stats.score_matrix(values, inputs.systems, items)[0]
        spa.append({"metric": name, **stats.soft_pairwise_accuracy(human_matrix, metric_matrix, signs=signs)})
        pdp.append({"metric": name, **stats.pairwise_difference_pearson(inputs.human, values, items)})
    chosen = ranked_metrics(spa)
    left_out = [name for name in inputs.metrics if name not in chosen]
    n_perm = ranking_permutations(context.n_perm, len(chosen))
    rows = []
    if n_perm > 0 and len(chosen) >= 2:
        metrics = {name: inputs.metrics[name] for name in chosen}
        rows = stats.wmt_ranking(inputs.human, metrics, inputs.systems, items, n_perm=n_perm, seed=context.seed)
        clusters = context.part("ranking")["clusters"]
        for row in rows:
            row["pearson_cluster"] = clusters.get(row["metric"])
    return {"spa": spa, "pdp": pdp, "wmt_ranking": {"rows": rows, "permutations": n_perm, "left_out": left_out}}


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
        note="Per statistic, metrics fall into clusters that PERM-BOTH tests (scores z-scored and swapped per "
        f"response, {ranking.get('permutations', 0):,} permutations, one-sided p < 0.05) cannot tell apart; the "
        "ranking is by the average of the two cluster ranks (WMT24/25). Pearson cluster: the ranking above, for "
        "comparison."
        + (
            f" Ranked: the {MAX_RANKING_METRICS} metrics with the best SPA (not ranked: "
            f"{', '.join(ranking['left_out'])})."
            if ranking.get("left_out")
            else ""
        ),
        empty="Needs at least two metrics and the permutations switched on.",
    )


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
