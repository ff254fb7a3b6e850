"""The report's `pairwise` section (the section the pairwise task kind contributes): Bradley-Terry
ranking, win/tie/loss matrix, how well each metric and LLM judge agrees with the human pairwise
judgements, and their CSV, LaTeX and terminal forms. Orchestration only; the statistics are in
`analysis.stats.pairwise` (reached here at call time, never when Django starts)."""

import importlib

import numpy as np

from analysis.report.latex import latex_escape, number, tabular
from analysis.report.population import kept_systems
from analysis.sections.base import Section
from annotation.kinds.pairwise.selectors import accepted_judgements, judged_pairs, judgement_rows
from annotation.models import REFERENCE_SYSTEM_NAME
from scoring.selectors.scores import metric_scores
from scoring.services.judges.pairwise import cached_judge_statistics

OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}


def pairwise_stats():
    # scipy.stats and scipy.optimize are loaded when a report is computed, not when Django starts
    # (this module is imported by analysis.services, which views import).
    return importlib.import_module("analysis.stats.pairwise")


def judgement_arrays(rows):
    systems = sorted({row[1] for row in rows} | {row[2] for row in rows})
    index = {name: i for i, name in enumerate(systems)}
    contexts = {}
    context = np.array([contexts.setdefault(row[0], len(contexts)) for row in rows], dtype=int)
    a = np.array([index[row[1]] for row in rows], dtype=int)
    b = np.array([index[row[2]] for row in rows], dtype=int)
    outcome = np.array([OUTCOME[row[5]] for row in rows], dtype=float)
    return systems, context, a, b, outcome


def metric_table(rows, systems, strengths, scores):
    """Per metric: tie-calibrated pairwise accuracy over the judgements both responses of which it
    scored, and Kendall's tau between its system ranking (mean score over the judged responses of
    each system) and the Bradley-Terry strengths. Judgements with the reference on one side are
    left out: a reference-based metric cannot score the reference against itself (so the reference
    has no score and no place in the metric's ranking either).

    In arrays: each judged response is looked up once per metric, not once per judgement (the
    filter-sensitivity audit calls this for every set of kept annotators; per-judgement lookups
    took seconds per call on 50,000 judgements and 20 metrics)."""
    table, epsilons = [], {}
    rows = [row for row in rows if REFERENCE_SYSTEM_NAME not in (row[1], row[2])]
    if not rows:
        return table, epsilons
    index = {name: i for i, name in enumerate(systems)}
    sides = np.array([(row[3], row[4]) for row in rows], dtype=np.int64)
    responses, first, position = np.unique(sides.T.ravel(), return_index=True, return_inverse=True)
    position_a, position_b = position[: len(rows)], position[len(rows) :]
    system_of = np.array([index[row[1]] for row in rows] + [index[row[2]] for row in rows])[first]
    human = np.array([OUTCOME[row[5]] for row in rows], dtype=float)
    for metric, values in sorted(scores.items()):
        found = [values.get(response) for response in responses.tolist()]
        scored = np.array([value is not None for value in found])
        pairs = scored[position_a] & scored[position_b]
        if not pairs.any():
            continue
        value = np.array([np.nan if v is None else v for v in found], dtype=float)
        accuracy, epsilon = pairwise_stats().tie_calibrated_accuracy(
            value[position_a][pairs], value[position_b][pairs], human[pairs]
        )
        # Each system's mean over its distinct judged responses that the metric scored.
        n = np.bincount(system_of[scored], minlength=len(systems))
        total = np.bincount(system_of[scored], weights=value[scored], minlength=len(systems))
        means = np.divide(total, n, out=np.full(len(systems), np.nan), where=n > 0)
        table.append(
            {
                "metric": metric,
                "pairwise_accuracy": accuracy,
                "n_pairs": int(pairs.sum()),
                "kendall_vs_bt": pairwise_stats().kendall_tau(means, strengths),
            }
        )
        epsilons[metric] = epsilon
    table.sort(key=lambda entry: -(entry["pairwise_accuracy"] or 0))
    return table, epsilons


def _metrics_note(n_with_reference):
    if not n_with_reference:
        return ""
    judgements = (
        "1 judgement with the reference on one side is"
        if n_with_reference == 1
        else (f"{n_with_reference} judgements with the reference on one side are")
    )
    return (
        f"{judgements} left out of the metrics' pairwise accuracy and ranking: a reference-based metric "
        "cannot score the reference against itself."
    )


def _judges(dataset, surveys, aspect, apply_exclusions, systems=None):
    """The judges' table over the same accepted judgements as the ranking (its filters applied)."""
    kept = kept_systems(systems)

    def pairs():
        rows = judged_pairs(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
        return rows if kept is None else [r for r in rows if r["system_a"] in kept and r["system_b"] in kept]

    return cached_judge_statistics(dataset=dataset, pairs=pairs)


def pairwise_section(
    *, dataset, surveys=None, aspect="overall", apply_exclusions=True, n_boot=1000, seed=0, systems=None
):
    """The `pairwise` object of the report, or None when the dataset has no pairwise judgements.

    `{"systems": [{system, strength, ci_low, ci_high, wins, losses, ties}], "matrix":
    [{system, opponent, wins, losses, ties, win_rate, ci_low, ci_high}], "metrics": [{metric,
    pairwise_accuracy, n_pairs, kendall_vs_bt}] (judgements against the reference left out: see
    `metrics_note`), "adjacent": [{higher, lower, p_value, significant}],
    "tie_epsilon": {metric: the tie threshold its accuracy used}, "judges": [{judge, agreement, n_pairs,
    position_bias, self_consistency, n_with_human_winner, unreadable_verdicts}] (the owner's LLM judges
    that judged these pairs in both orders, read from the judge cache), "n_judgements", "n_contexts",
    "reference" (REFERENCE_SYSTEM_NAME when the reference is a side, else None),
    "n_reference_judgements", "metrics_note", "method"}`.
    """
    judgements = accepted_judgements(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    kept = kept_systems(systems)  # the report's systems filter, as every other section applies it
    if kept is not None:
        judgements = judgements.filter(response_a__system__name__in=kept, response_b__system__name__in=kept)
    rows = judgement_rows(judgements)
    if not rows:
        return None
    systems, context, a, b, outcome = judgement_arrays(rows)
    result = pairwise_stats().ranking(systems, context, a, b, outcome, n_boot=n_boot, seed=seed)
    metrics, epsilons = metric_table(rows, systems, result["strengths"], metric_scores(dataset=dataset))
    with_reference = sum(1 for row in rows if REFERENCE_SYSTEM_NAME in (row[1], row[2]))
    return {
        "systems": result["systems"],
        "matrix": result["matrix"],
        "metrics": metrics,
        "adjacent": result["adjacent"],
        "tie_epsilon": epsilons,
        "judges": _judges(dataset, surveys, aspect, apply_exclusions, systems),
        "n_judgements": len(rows),
        "n_contexts": int(context.max()) + 1,
        # The context's reference as a side (a survey's `reference_pairs`): named REFERENCE_SYSTEM_NAME.
        "reference": REFERENCE_SYSTEM_NAME if REFERENCE_SYSTEM_NAME in systems else None,
        "n_reference_judgements": with_reference,
        "metrics_note": _metrics_note(with_reference),
        "method": {
            "model": "Bradley-Terry, maximum likelihood (scipy L-BFGS-B), ridge 1e-4; strength = log-strength, mean 0",
            "ties": "a tie counts half a win for each side",
            "ci": f"percentile bootstrap over contexts, {n_boot} resamples, 95%",
            "matrix_ci": "Wilson interval of the win share among decisive judgements (ties excluded)",
            "adjacent": "two-sided bootstrap p that neighbouring systems differ in strength",
            "pairwise_accuracy": "tie-calibrated pairwise accuracy (Deutsch et al. 2023, 'Ties Matter')",
            "kendall_vs_bt": "Kendall tau-b: metric's mean score per system vs Bradley-Terry strength",
            "judges": "LLM judges asked each distinct pair in both orders; agreement: share of human judgements "
            "with a winner where the judge picked it in both orders; position bias: share of verdicts for the "
            "reply shown first (0.5 = none); self-consistency: share of distinct pairs with the same pick in "
            "both orders",
        },
    }


def compute(context):
    section = pairwise_section(
        dataset=context.dataset,
        surveys=context.surveys,
        aspect=context.aspect,
        apply_exclusions=context.apply_exclusions,
        n_boot=context.n_boot,
        seed=context.seed,
        systems=context.systems,
    )
    return {"pairwise": section}


def applies(data):
    """Only where the report has pairwise judgements."""
    return bool(data.get("pairwise"))


def present(data):
    return {"pairwise": data["pairwise"]}


def nav(data, context):
    return [("t-pairwise", "Pairwise ranking")]


# --- the exports (the JSON carries the `pairwise` object as is) --------------------------------


PAIRWISE_TABLES = ("pairwise_systems", "pairwise_matrix", "pairwise_metrics", "pairwise_adjacent", "pairwise_judges")

COLUMNS = {
    "pairwise_systems": ["system", "strength", "ci_low", "ci_high", "wins", "losses", "ties"],
    "pairwise_matrix": ["system", "opponent", "wins", "losses", "ties", "win_rate", "ci_low", "ci_high"],
    "pairwise_metrics": ["metric", "pairwise_accuracy", "n_pairs", "kendall_vs_bt", "tie_epsilon"],
    "pairwise_adjacent": ["higher", "lower", "p_value", "significant"],
    "pairwise_judges": [
        "judge", "agreement", "n_pairs", "position_bias", "self_consistency", "n_with_human_winner",
        "unreadable_verdicts",
    ],
}  # fmt: skip

SOURCE = {
    "pairwise_systems": "systems",
    "pairwise_matrix": "matrix",
    "pairwise_metrics": "metrics",
    "pairwise_adjacent": "adjacent",
    "pairwise_judges": "judges",
}


def pairwise_table(data, name):
    """(header, rows) of one pairwise table; no rows when the report has no pairwise judgements."""
    pairwise = data.get("pairwise") or {}
    records = pairwise.get(SOURCE[name], [])
    if name == "pairwise_metrics":
        epsilons = pairwise.get("tie_epsilon") or {}
        records = [{**record, "tie_epsilon": epsilons.get(record["metric"])} for record in records]
    columns = COLUMNS[name]
    return columns, [[record.get(column) for column in columns] for record in records]


def latex(data):
    """booktabs tables of the Bradley-Terry ranking and the metrics' pairwise accuracy ([] if none)."""
    pairwise = data.get("pairwise")
    if not pairwise:
        return []
    name = data.get("dataset", "")
    systems = [
        [latex_escape(r["system"]), number(r["strength"], 2), f"[{number(r['ci_low'], 2)}, {number(r['ci_high'], 2)}]",
         str(r["wins"]), str(r["ties"]), str(r["losses"])]
        for r in pairwise["systems"]
    ]  # fmt: skip
    parts = [
        tabular(
            f"Bradley-Terry ranking from pairwise human judgements on {name} (ties count half; 95% bootstrap CI).",
            "tab:pairwise-ranking",
            ["System", "Strength", "95\\% CI", "Wins", "Ties", "Losses"],
            systems,
        )
    ]
    if pairwise.get("metrics"):
        metrics = [
            [latex_escape(r["metric"]), number(r["pairwise_accuracy"]), str(r["n_pairs"]), number(r["kendall_vs_bt"])]
            for r in pairwise["metrics"]
        ]
        parts.append(
            tabular(
                f"Agreement of metrics with pairwise human judgements on {name} (tie-calibrated pairwise accuracy).",
                "tab:pairwise-metrics",
                ["Metric", "Pairwise acc.", "$n$", "Kendall $\\tau$ vs BT"],
                metrics,
            )
        )
    if pairwise.get("judges"):
        judges = [
            [latex_escape(r["judge"]), number(r["agreement"]), str(r["n_pairs"]), number(r["position_bias"]),
             number(r["self_consistency"])]
            for r in pairwise["judges"]
        ]  # fmt: skip
        parts.append(
            tabular(
                f"LLM judges against pairwise human judgements on {name}, each pair judged in both orders "
                "(position bias: share of picks of the reply shown first).",
                "tab:pairwise-judges",
                ["Judge", "Agreement", "$n$", "Position bias", "Self-consistency"],
                judges,
            )
        )
    return parts


def pairwise_summary_lines(data):
    """The Bradley-Terry ranking as fixed-width lines for a terminal ([] without pairwise judgements)."""
    systems = (data.get("pairwise") or {}).get("systems") or []
    if not systems:
        return []
    width = max(len("system"), *(len(r["system"]) for r in systems))
    intervals = [f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]" if r.get("ci_low") is not None else "--" for r in systems]
    ci_width = max(len("95% CI"), *(len(ci) for ci in intervals))
    header = f"{'system':<{width}}  {'strength':>8}  {'95% CI':>{ci_width}}  {'wins':>5}  {'ties':>5}  {'losses':>6}"
    lines = [
        f"{data.get('dataset', '')}: Bradley-Terry ranking from {data['pairwise'].get('n_judgements', 0)} pairwise"
        " judgements (ties count half; 95% bootstrap interval)",
        header,
        "-" * len(header),
    ]
    for record, ci in zip(systems, intervals, strict=True):
        lines.append(
            f"{record['system']:<{width}}  {record['strength']:>8.2f}  {ci:>{ci_width}}  {record['wins']:>5}  "
            f"{record['ties']:>5}  {record['losses']:>6}"
        )
    return lines


SECTION = Section(
    name="pairwise",
    keys=("pairwise",),
    compute=compute,
    applies=applies,
    template="analysis/sections/pairwise.html",
    present=present,
    nav=nav,
    tables={name: lambda data, name=name: pairwise_table(data, name) for name in PAIRWISE_TABLES},
    latex=latex,
)
