"""The meta-evaluation tables (issue 20) flat enough for a CSV, and the ranking for LaTeX.

`analysis.exporting` writes them: this module only says which fields each table has.
"""

TABLES = ("ranking", "permutation_tests", "pairwise_accuracy", "planning")
SYSTEM_EXTRA_COLUMNS = [
    "kendall_ci_low",
    "kendall_ci_high",
    "pearson_p_bootboth",
    "spearman_p_bootboth",
    "kendall_p_bootboth",
]


def _rows(records, columns):
    return columns, [[record.get(column) for column in columns] for record in records]


def table(data, name):
    """(header, rows) of one meta-evaluation table."""
    significance = data.get("significance") or {}
    if name == "ranking":
        return _rows(
            significance.get("ranking", []), ["metric", "cluster", "pearson", "pearson_ci_low", "pearson_ci_high", "n"]
        )
    if name == "permutation_tests":
        return _rows(
            significance.get("permutation_tests", []), ["a", "b", "r_a", "r_b", "delta", "n", "p", "p_two_sided"]
        )
    if name == "pairwise_accuracy":
        section = data.get("pairwise_accuracy") or {}
        systems = {row["metric"]: row for row in section.get("system_level", [])}
        header = [
            "metric",
            "system_accuracy",
            "system_pairs",
            "system_agree",
            "accuracy_tie_calibrated",
            "epsilon",
            "accuracy_untied",
            "response_pairs",
            "contexts",
            "human_ties",
        ]
        rows = []
        for row in section.get("utterance_level", []):
            system = systems.get(row["metric"], {})
            rows.append(
                [
                    row["metric"],
                    system.get("accuracy"),
                    system.get("n_pairs"),
                    system.get("n_agree"),
                    row["accuracy"],
                    row["epsilon"],
                    row["accuracy_untied"],
                    row["n_pairs"],
                    row["n_contexts"],
                    row["human_ties"],
                ]
            )
        return header, rows
    if name == "planning":
        planning = data.get("planning") or {}
        header = [
            "metric",
            "r",
            "target_width",
            "ratings_per_response",
            "reliability",
            "expected_r",
            "responses_for_width",
            "more_responses_for_width",
            "responses_to_separate",
            "more_responses_to_separate",
        ]
        rows = [
            [
                planning.get("metric"),
                planning.get("r"),
                planning.get("target_width"),
                *[option.get(key) for key in header[3:]],
            ]
            for option in planning.get("options", [])
        ]
        return header, rows
    raise KeyError(name)


def latex_ranking(data):
    """(caption, label, header, rows) of the headline ranking, cells already formatted; None if empty."""
    ranking = (data.get("significance") or {}).get("ranking", [])
    if not ranking:
        return None
    rows = [
        [str(row["cluster"]), row["metric"], "--" if row["pearson"] is None else f"{row['pearson']:.3f}", str(row["n"])]
        for row in ranking
    ]
    method = (data.get("significance") or {}).get("method") or {}
    caption = (
        f"Metrics ranked by correlation with human judgements on {data.get('dataset', '')}, grouped into clusters "
        f"not significantly different (paired permutation test, {method.get('permutations', 0)} permutations, "
        f"p < {method.get('alpha', 0.05)})."
    )
    return caption, "tab:metric-clusters", ["Cluster", "Metric", "Pearson", "$n$"], rows
