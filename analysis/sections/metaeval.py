"""Meta-evaluation sections of the report: pairwise accuracy and significance clusters (issue 20).

Each function takes the aligned report inputs (and the sections already computed) and returns a
JSON-ready dict; the statistics themselves are in `analysis/stats/`.
"""

import numpy as np

from analysis.stats.pairwise_accuracy import system_pairwise_accuracy, utterance_pairwise_accuracy
from analysis.stats.permutation import permutation_tests, significance_clusters

ALPHA = 0.05


def response_contexts(inputs):
    """The context id of each rated response, aligned with the report's vectors."""
    return np.array([inputs.contexts[int(i)] for i in inputs.response_ids], dtype=np.int64)


def pairwise_accuracy_section(inputs, systems):
    """System level over every pair of systems; response level within contexts, tie-calibrated."""
    human_means = np.array([row["human_mean"] if row["human_mean"] is not None else np.nan for row in systems])
    system_rows = []
    for name in inputs.metrics:
        means = np.array([_mean(row, name) for row in systems])
        system_rows.append({"metric": name, **system_pairwise_accuracy(human_means, means)})
    return {
        "system_level": system_rows,
        "utterance_level": utterance_pairwise_accuracy(inputs.human, inputs.metrics, response_contexts(inputs)),
    }


def _mean(row, name):
    value = (row["metrics"].get(name) or {}).get("mean")
    return np.nan if value is None else value


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
