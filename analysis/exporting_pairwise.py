"""The report's pairwise tables for CSV and LaTeX (the JSON carries the `pairwise` object as is)."""

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


def pairwise_latex(data, *, tabular, escape, number):
    """booktabs tables of the Bradley-Terry ranking and the metrics' pairwise accuracy ([] if none)."""
    pairwise = data.get("pairwise")
    if not pairwise:
        return []
    name = data.get("dataset", "")
    systems = [
        [escape(r["system"]), number(r["strength"], 2), f"[{number(r['ci_low'], 2)}, {number(r['ci_high'], 2)}]",
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
            [escape(r["metric"]), number(r["pairwise_accuracy"]), str(r["n_pairs"]), number(r["kendall_vs_bt"])]
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
            [escape(r["judge"]), number(r["agreement"]), str(r["n_pairs"]), number(r["position_bias"]),
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
