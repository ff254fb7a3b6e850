"""The meta-evaluation statistics (issue 20) against independent computations: scipy for Kendall,
direct loops for Boot-Both, pairwise accuracy and permutation p-values, and worked examples."""

from itertools import combinations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis import stats
from analysis.stats.bootboth import boot_both, symmetric_interval
from analysis.stats.correlation import williams_test
from analysis.stats.pairwise_accuracy import (
    pairs_within_groups,
    system_pairwise_accuracy,
    tie_calibration,
    utterance_pairwise_accuracy,
)
from analysis.stats.permutation import permutation_tests, significance_clusters, swap_matrix
from analysis.stats.planning import (
    fisher_width,
    reliability,
    responses_for_width,
    responses_to_separate,
    variance_components,
)


def study(seed=0, n_systems=4, n_contexts=12):
    """Every system answers every context; human means with ties (1-5 ratings averaged over 3)."""
    rng = np.random.default_rng(seed)
    systems = np.repeat(np.arange(n_systems), n_contexts)
    contexts = np.tile(np.arange(n_contexts), n_systems)
    quality = rng.normal(0, 1, n_systems)[systems] + rng.normal(0, 1, systems.size)
    human = np.clip(np.round((3 + quality) * 3) / 3, 1, 5)
    metrics = {"good": quality + rng.normal(0, 0.7, systems.size), "noise": rng.normal(size=systems.size)}
    metrics["coarse"] = np.round(metrics["good"])  # many metric ties
    return human, metrics, systems, contexts


def test_kendall_equals_scipy_at_utterance_and_system_level():
    human, metrics, systems, contexts = study()
    for row in stats.utterance_level(human, metrics, n_boot=0):
        expected = scipy_stats.kendalltau(human, metrics[row["metric"]])
        assert row["kendall"] == pytest.approx(expected.statistic, abs=1e-12)
        assert row["kendall_p"] == pytest.approx(expected.pvalue, abs=1e-12)
    result = stats.system_level(human, metrics, systems, contexts=contexts, n_boot=0)
    human_means = [human[systems == s].mean() for s in range(4)]
    for row in result["correlations"]:
        means = [metrics[row["metric"]][systems == s].mean() for s in range(4)]
        assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(human_means, means).statistic, abs=1e-12)


def test_boot_both_matches_a_direct_loop_over_resampled_systems_and_contexts():
    human, metrics, systems, contexts = study(seed=3)
    n_boot, seed = 300, 5
    result = boot_both(human, metrics, systems, contexts, n_boot=n_boot, seed=seed)
    rng = np.random.default_rng(seed)  # the same draws, in the same order, one block
    drawn_contexts = rng.integers(0, 12, size=(n_boot, 12))
    drawn_systems = rng.integers(0, 4, size=(n_boot, 4))
    for name, values in metrics.items():
        draws = {"pearson": [], "spearman": [], "kendall": []}
        for b in range(n_boot):
            weights = np.bincount(drawn_contexts[b], minlength=12)[contexts]
            h = [np.average(human[systems == s], weights=weights[systems == s]) for s in drawn_systems[b]]
            m = [np.average(values[systems == s], weights=weights[systems == s]) for s in drawn_systems[b]]
            degenerate = np.ptp(h) == 0 or np.ptp(m) == 0
            draws["pearson"].append(np.nan if degenerate else scipy_stats.pearsonr(h, m).statistic)
            draws["spearman"].append(np.nan if degenerate else scipy_stats.spearmanr(h, m).statistic)
            draws["kendall"].append(np.nan if degenerate else scipy_stats.kendalltau(h, m).statistic)
        for kind, samples in draws.items():
            assert result[name][kind] == pytest.approx(symmetric_interval(np.array(samples), 0.95), abs=1e-9)


def test_symmetric_interval_takes_the_same_number_of_draws_from_each_tail_as_its_p_value_counts():
    # 40 draws, alpha = 0.025: one draw in each tail. 0, 1, ..., 39: one draw at zero.
    low, high, p = symmetric_interval(np.arange(40, dtype=float), 0.95)
    assert (low, high, p) == (0.0, 39.0, pytest.approx(0.05))  # p is not below 0.05: 0 is inside
    low, high, p = symmetric_interval(np.arange(40) + 0.5, 0.95)
    assert (low, high, p) == (0.5, 39.5, 0.0)  # no draw at or below 0: excluded, p below 0.05
    low, high, p = symmetric_interval(np.r_[np.full(30, np.nan), np.arange(10.0)], 0.95)
    assert (low, high, p) == (None, None, None)  # most resamples undefined: no interval


def test_system_pairwise_accuracy_equals_a_loop_over_system_pairs():
    rng = np.random.default_rng(1)
    human, metric = rng.integers(1, 4, 7).astype(float), rng.normal(size=7)
    agree = [np.sign(human[i] - human[j]) == np.sign(metric[i] - metric[j]) for i, j in combinations(range(7), 2)]
    result = system_pairwise_accuracy(human, metric)
    assert result == {"accuracy": pytest.approx(np.mean(agree)), "n_pairs": 21, "n_agree": int(np.sum(agree))}


def test_tie_calibration_worked_example_rewards_tying_what_the_humans_tie():
    # One context, three responses; humans tie the first two, the metric nearly does (0.02 apart).
    human, metric = np.array([3.0, 3.0, 4.0]), np.array([0.50, 0.52, 0.90])
    row = utterance_pairwise_accuracy(human, {"m": metric}, np.zeros(3))[0]
    assert row["accuracy_untied"] == pytest.approx(2 / 3)  # the tied pair counts wrong without a threshold
    assert row["accuracy"] == pytest.approx(1.0) and row["epsilon"] == pytest.approx(0.02)
    assert (row["n_pairs"], row["n_contexts"], row["human_ties"]) == (3, 1, 1)


def brute_force_acc_eq(human, metric, contexts, epsilon):
    """Deutsch et al.'s acc_eq with threshold epsilon, averaged over contexts, by direct loops."""
    per_context = []
    for context in np.unique(contexts):
        items = np.flatnonzero(contexts == context)
        correct = []
        for i, j in combinations(items, 2):
            human_tie = abs(human[i] - human[j]) <= 1e-9
            metric_tie = abs(metric[i] - metric[j]) <= epsilon
            if human_tie or metric_tie:
                correct.append(human_tie and metric_tie)
            else:
                correct.append(np.sign(human[i] - human[j]) == np.sign(metric[i] - metric[j]))
        if correct:
            per_context.append(np.mean(correct))
    return np.mean(per_context)


def test_utterance_pairwise_accuracy_equals_a_brute_force_search_over_thresholds():
    human, metrics, _, contexts = study(seed=4, n_contexts=15)
    for name, metric in metrics.items():
        row = next(r for r in utterance_pairwise_accuracy(human, metrics, contexts) if r["metric"] == name)
        distances = {0.0} | {abs(metric[i] - metric[j]) for i, j, _ in zip(*pairs_within_groups(contexts), strict=True)}
        scores = {eps: brute_force_acc_eq(human, metric, contexts, eps) for eps in distances}
        best = max(scores.values())
        assert row["accuracy"] == pytest.approx(best)
        assert scores[row["epsilon"]] == pytest.approx(best)
        assert row["accuracy_untied"] == pytest.approx(scores[0.0])


def test_tie_calibration_keeps_epsilon_zero_when_no_threshold_helps():
    accuracy, epsilon, untied = tie_calibration(np.array([1.0, -2.0]), np.array([0.5, -0.1]), np.array([0.5, 0.5]))
    assert (accuracy, epsilon, untied) == (1.0, 0.0, 1.0)


def test_permutation_p_values_equal_a_direct_loop_over_the_same_swaps():
    rng = np.random.default_rng(2)
    n, n_perm, seed = 40, 300, 9
    human = rng.normal(size=n)
    metrics = {"a": human + rng.normal(0, 1, n), "b": 10 * human + rng.normal(0, 14, n) + 3, "c": rng.normal(size=n)}
    rows = {(row["a"], row["b"]): row for row in permutation_tests(human, metrics, n_perm=n_perm, seed=seed)}
    swaps = swap_matrix(np.random.default_rng(seed), n_perm, n).astype(bool)

    def z(v):
        return (v - v.mean()) / v.std()

    for first, second in combinations(sorted(metrics), 2):
        a, b = z(metrics[first]), z(metrics[second])
        observed = scipy_stats.pearsonr(human, a).statistic - scipy_stats.pearsonr(human, b).statistic
        permuted = np.array(
            [
                scipy_stats.pearsonr(human, np.where(s, b, a)).statistic
                - scipy_stats.pearsonr(human, np.where(s, a, b)).statistic
                for s in swaps
            ]
        )
        better, worse = (first, second) if observed >= 0 else (second, first)
        row = rows[(better, worse)]
        tail = (permuted >= observed - 1e-12) if observed >= 0 else (permuted <= observed + 1e-12)
        assert row["p"] == pytest.approx((1 + tail.sum()) / (1 + n_perm))
        assert row["p_two_sided"] == pytest.approx(
            (1 + (np.abs(permuted) >= abs(observed) - 1e-12).sum()) / (1 + n_perm)
        )
        assert row["delta"] == pytest.approx(abs(observed))


def test_permutations_are_seeded_and_separate_a_strong_metric_from_noise():
    human, metrics, _, _ = study(seed=6, n_contexts=50)
    first = permutation_tests(human, metrics, n_perm=1000, seed=0)
    assert first == permutation_tests(human, metrics, n_perm=1000, seed=0)
    good_vs_noise = next(row for row in first if {row["a"], row["b"]} == {"good", "noise"})
    assert good_vs_noise["a"] == "good" and good_vs_noise["p"] < 0.01


def test_clusters_start_where_a_metric_of_the_current_cluster_beats_the_next_one():
    correlations = {"m1": 0.6, "m2": 0.58, "m3": 0.5, "m4": 0.49, "m5": None}
    tests = [
        {"a": "m1", "b": "m2", "p": 0.30},
        {"a": "m1", "b": "m3", "p": 0.01},
        {"a": "m2", "b": "m3", "p": 0.20},
        {"a": "m1", "b": "m4", "p": 0.001},
        {"a": "m2", "b": "m4", "p": 0.04},
        {"a": "m3", "b": "m4", "p": 0.6},
    ]
    # m3 is beaten by m1 (same cluster as m2): new cluster; m4 is only beaten by metrics above m3's cluster.
    assert significance_clusters(correlations, tests) == {"m1": 1, "m2": 1, "m3": 2, "m4": 2}


def test_variance_components_match_a_one_way_anova_by_hand():
    responses = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    scores = np.array([1, 2, 3, 3, 4, 5, 4, 5, 3], dtype=float)
    s_b, s_w, m = variance_components(responses, scores)
    # Within: each response's ratings vary by 1 (variance 1); means 2, 4, 4 have variance 4/3.
    assert (s_w, m) == (pytest.approx(1.0), 3.0)
    assert s_b == pytest.approx(4 / 3 - 1 / 3)
    assert reliability(s_b, s_w, 3) == pytest.approx(1 / (1 + 1 / 3))


def test_planned_numbers_are_the_smallest_that_reach_the_target():
    n = responses_for_width(0.4, 0.1)
    assert fisher_width(0.4, n) <= 0.1 < fisher_width(0.4, n - 1)
    n = responses_to_separate(0.45, 0.40, 0.7)
    assert williams_test(0.45, 0.40, 0.7, n)[1] < 0.05 <= williams_test(0.45, 0.40, 0.7, n - 1)[1]
    assert responses_to_separate(0.40, 0.45, 0.7) is None  # "a" must be the better one
