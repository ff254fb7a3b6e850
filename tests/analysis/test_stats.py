"""analysis.stats against scipy and hand-computed values (no database)."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis import stats
from analysis.stats.bootstrap import resample_counts


@pytest.fixture
def vectors():
    rng = np.random.default_rng(7)
    human = rng.integers(1, 6, 80).astype(float)  # many ties, like mean ratings
    metric = human + rng.normal(0, 1.5, 80)
    metric[:10] = 0.0  # a block of ties, like BLEU zeros
    other = rng.normal(size=80)
    return human, metric, other


def test_correlate_equals_scipy(vectors):
    human, metric, _ = vectors
    result = stats.correlate(human, metric)
    pearson = scipy_stats.pearsonr(human, metric)
    spearman = scipy_stats.spearmanr(human, metric)
    assert result["pearson"] == pytest.approx(pearson.statistic, abs=1e-12)
    assert result["pearson_p"] == pytest.approx(pearson.pvalue, rel=1e-9)
    assert result["spearman"] == pytest.approx(spearman.statistic, abs=1e-12)
    assert result["spearman_p"] == pytest.approx(spearman.pvalue, rel=1e-9)
    assert result["n"] == 80


def test_correlate_of_a_constant_vector_is_undefined_not_nan():
    result = stats.correlate([1, 2, 3, 4], [2, 2, 2, 2])
    assert result["pearson"] is None and result["spearman"] is None and result["n"] == 4


def test_bootstrap_correlations_equal_scipy_on_each_resample_ranking_within_the_resample(vectors):
    human, metric, other = vectors
    rng = np.random.default_rng(3)
    indices = rng.integers(0, human.size, size=(40, human.size))
    pearson, spearman = stats.correlations_from_counts(
        resample_counts(indices), human, np.column_stack([metric, other])
    )
    for b, idx in enumerate(indices):
        for j, column in enumerate((metric, other)):
            assert pearson[b, j] == pytest.approx(scipy_stats.pearsonr(human[idx], column[idx]).statistic, abs=1e-12)
            assert spearman[b, j] == pytest.approx(scipy_stats.spearmanr(human[idx], column[idx]).statistic, abs=1e-12)


def test_resample_counts_count_each_drawn_index():
    counts = resample_counts(np.array([[0, 0, 2], [1, 2, 2]]))
    assert counts.tolist() == [[2, 0, 1], [0, 1, 2]]


def test_bootstrap_interval_contains_the_estimate_and_is_reproducible(vectors):
    human, metric, _ = vectors
    first = stats.bootstrap_correlations(human, metric[:, None], n_boot=300, seed=1)
    again = stats.bootstrap_correlations(human, metric[:, None], n_boot=300, seed=1)
    low, high = first["pearson_ci"][0]
    assert low < scipy_stats.pearsonr(human, metric).statistic < high
    low, high = first["spearman_ci"][0]
    assert low < scipy_stats.spearmanr(human, metric).statistic < high
    np.testing.assert_array_equal(first["pearson_ci"], again["pearson_ci"])


def test_bootstrap_interval_matches_a_naive_loop_with_the_same_resamples(vectors):
    human, metric, _ = vectors
    n_boot, seed = 200, 11
    result = stats.bootstrap_correlations(human, metric[:, None], n_boot=n_boot, seed=seed)
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, human.size, size=(n_boot, human.size))  # same draws, one block
    naive = [scipy_stats.spearmanr(human[idx], metric[idx]).statistic for idx in indices]
    np.testing.assert_allclose(result["spearman_ci"][0], np.quantile(naive, [0.025, 0.975]), atol=1e-12)


def test_williams_test_matches_a_hand_computed_value():
    # r12 = .6, r13 = .4, r23 = .5, n = 50:
    # |R| = 1 - .36 - .16 - .25 + 2*.6*.4*.5 = .47
    # t = .2 * sqrt(49 * 1.5) / sqrt(2 * 49/47 * .47 + (1.0**2 / 4) * .5**3) = 1.7146/ sqrt(.98 + .03125)
    t, p_one, p_two = stats.williams_test(0.6, 0.4, 0.5, 50)
    expected = 0.2 * math.sqrt(49 * 1.5) / math.sqrt(2 * 49 / 47 * 0.47 + 0.25 * 0.125)
    assert t == pytest.approx(expected, rel=1e-12)
    assert t == pytest.approx(1.7050, abs=1e-3)
    assert p_one == pytest.approx(scipy_stats.t.sf(expected, 47), rel=1e-12)
    assert p_two == pytest.approx(2 * p_one, rel=1e-12)


def test_pairwise_williams_names_the_better_metric_first(vectors):
    human, metric, other = vectors
    rows = stats.pairwise_williams(human, {"good": metric, "noise": other})
    assert len(rows) == 1
    assert rows[0]["a"] == "good" and rows[0]["b"] == "noise"
    assert rows[0]["r_a"] == pytest.approx(np.corrcoef(human, metric)[0, 1])
    assert rows[0]["p"] < 0.05


def test_utterance_level_rows_carry_cis_and_skip_missing_values(vectors):
    human, metric, other = vectors
    partial = other.copy()
    partial[:20] = np.nan
    rows = stats.utterance_level(human, {"m": metric, "partial": partial}, n_boot=100)
    assert [r["metric"] for r in rows] == ["m", "partial"]
    assert rows[1]["n"] == 60
    assert rows[1]["pearson"] == pytest.approx(scipy_stats.pearsonr(human[20:], other[20:]).statistic)
    assert rows[0]["pearson_ci_low"] < rows[0]["pearson"] < rows[0]["pearson_ci_high"]


def test_system_level_means_and_correlation_across_systems():
    human = np.array([1, 2, 3, 2, 3, 4, 4, 5, 5], dtype=float)
    metric = np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.4, 0.5, 0.6, 0.4])
    systems = np.array(["a", "a", "a", "b", "b", "b", "c", "c", "c"])
    result = stats.system_level(human, {"m": metric}, systems, n_boot=200)
    means = {row["system"]: row for row in result["systems"]}
    assert means["a"]["human_mean"] == pytest.approx(2.0)
    assert means["c"]["metrics"]["m"]["mean"] == pytest.approx(0.5)
    assert means["a"]["human_ci_low"] <= 2.0 <= means["a"]["human_ci_high"]
    expected = scipy_stats.pearsonr([2.0, 3.0, 14 / 3], [0.2, 0.3, 0.5])
    assert result["correlations"][0]["pearson"] == pytest.approx(expected.statistic)
    assert result["correlations"][0]["pearson_p"] == pytest.approx(expected.pvalue)
    assert result["correlations"][0]["n"] == 3


def test_length_bias_splits_at_six_words_and_tests_with_welch_and_mann_whitney():
    delta = np.array([0, 3, 6, 7, 10, 20, 1, 8])
    human = np.array([4, 5, 4, 2, 1, 2, 5, 3], dtype=float)
    result = stats.length_bias(delta, human, {})
    row = result["rows"][0]
    short, long_ = human[[0, 1, 2, 6]], human[[3, 4, 5, 7]]
    assert (row["n_short"], row["n_long"]) == (4, 4)
    assert row["mean_short"] == pytest.approx(4.5) and row["mean_long"] == pytest.approx(2.0)
    assert row["welch_p"] == pytest.approx(scipy_stats.ttest_ind(short, long_, equal_var=False).pvalue)
    assert row["mannwhitney_p"] == pytest.approx(scipy_stats.mannwhitneyu(short, long_).pvalue)


def test_length_bias_tests_a_constant_group_without_a_precision_warning():
    # Every short response rated 4 (a judge giving one score to short replies does this): its
    # variance is exactly 0, which Welch's test handles, and scipy's "precision loss" warning,
    # meant for nearly identical data, would be a false alarm in every report built on it.
    delta = np.array([0, 3, 6, 1, 7, 10, 20, 8])
    human = np.array([4, 4, 4, 4, 2, 1, 2, 3], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        row = stats.length_bias(delta, human, {})["rows"][0]
    short, long_ = human[:4], human[4:]
    # Welch's t with one variance 0: the difference over the long group's standard error alone
    expected_t = (short.mean() - long_.mean()) / math.sqrt(long_.var(ddof=1) / long_.size)
    assert row["welch_t"] == pytest.approx(expected_t)
    assert row["mannwhitney_p"] == pytest.approx(scipy_stats.mannwhitneyu(short, long_).pvalue)


def test_length_bias_still_warns_about_nearly_identical_values():
    # not constant, only nearly: scipy's warning is real there and is left to reach the log
    delta = np.array([0, 3, 6, 1, 7, 10, 20, 8])
    human = np.array([4, 4 + 1e-15, 4, 4, 4, 4 - 1e-15, 4, 4], dtype=float)
    with pytest.warns(RuntimeWarning, match="Precision loss"):
        stats.length_bias(delta, human, {})


def test_normalise_to_human_matches_mean_and_spread_then_clips():
    human = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    metric = np.array([0.0, 0.0, 0.1, 0.2, 10.0])
    normalised = stats.normalise_to_human(metric, human)
    z = (metric - metric.mean()) / metric.std()
    np.testing.assert_allclose(normalised, np.clip(z * human.std() + 3.0, 1, 5))
    assert normalised.max() == 5.0


def test_failure_analysis_counts_good_responses_overlap_metrics_miss_and_the_learned_metric_catches():
    human = np.array([5, 5, 4, 4, 1, 1, 2, 5], dtype=float)
    bleu2 = np.array([0, 0, 0, 1, 1, 1, 1, 1], dtype=float)  # misses the first three good ones
    rouge = np.array([0, 1, 0, 1, 1, 1, 1, 1], dtype=float)
    adem = np.array([9, 9, 0, 9, 0, 0, 0, 9], dtype=float)  # catches two of them
    result = stats.failure_analysis(human, {"bleu2": bleu2, "rouge_l": rouge, "adem:x": adem}, learned="adem:x", seed=3)
    cases = {case["metric"]: case for case in result["cases"]}
    assert result["n_good"] == 5
    assert cases["bleu2"]["n_scored_low"] == 3 and cases["bleu2"]["n_learned_high"] == 2
    assert cases["rouge_l"]["n_scored_low"] == 2
    assert cases["bleu2 & rouge_l"]["n_scored_low"] == 2
    assert sorted(cases["bleu2"]["examples"]) == [0, 1, 2]
    again = stats.failure_analysis(human, {"bleu2": bleu2, "rouge_l": rouge}, n_examples=2, seed=3)
    same = stats.failure_analysis(human, {"bleu2": bleu2, "rouge_l": rouge}, n_examples=2, seed=3)
    assert again["cases"][0]["examples"] == same["cases"][0]["examples"]


def test_stopword_table_correlates_both_variants(vectors):
    human, metric, other = vectors
    rows = stats.stopword_table(human, {"bleu2": metric, "bleu2_nostop": other}, [("bleu2", "bleu2_nostop")])
    assert rows[0]["pearson_with"] == pytest.approx(scipy_stats.pearsonr(human, metric).statistic)
    assert rows[0]["spearman_without"] == pytest.approx(scipy_stats.spearmanr(human, other).statistic)


def five_systems(seed, strength):
    """Five systems with 60 responses each, whose human and metric means relate by `strength`."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, 5)
    systems = np.repeat([f"s{i}" for i in range(5)], 60)
    base = np.repeat(quality, 60)
    human = np.clip(3 + base + rng.normal(0, 0.5, base.size), 1, 5)
    metric = strength * base + rng.normal(0, 1, 5).repeat(60) * (1 - strength) + rng.normal(0, 0.2, base.size)
    return human, {"m": metric}, systems


def test_system_level_boot_both_ci_excludes_zero_exactly_when_its_p_value_is_below_five_percent():
    checked = {True: 0, False: 0}
    for seed in range(60):
        human, metrics, systems = five_systems(seed, strength=seed % 4 / 3)
        row = stats.system_level(human, metrics, systems, n_boot=200, seed=seed)["correlations"][0]
        for kind in ("pearson", "spearman", "kendall"):
            p, low, high = row[f"{kind}_p_bootboth"], row[f"{kind}_ci_low"], row[f"{kind}_ci_high"]
            if p is None:
                continue
            checked[p < 0.05] += 1
            assert (p < 0.05) == (low > 0 or high < 0), (seed, kind, row)
    assert checked[True] > 10 and checked[False] > 10  # both outcomes exercised, no boundary skipped


def test_system_level_ci_over_five_systems_is_as_wide_as_the_small_sample_allows():
    human, metrics, systems = five_systems(3, strength=0.3)
    row = stats.system_level(human, metrics, systems, n_boot=500, seed=0)["correlations"][0]
    assert row["n"] == 5
    assert row["pearson_ci_high"] - row["pearson_ci_low"] > 0.8


def test_fisher_interval_needs_four_items_and_matches_the_textbook_formula():
    assert stats.fisher_interval(0.5, 3) == (None, None)
    low, high = stats.fisher_interval(0.5, 28)
    assert low == pytest.approx(np.tanh(np.arctanh(0.5) - 1.959964 / 5), abs=1e-6)
    assert high == pytest.approx(np.tanh(np.arctanh(0.5) + 1.959964 / 5), abs=1e-6)
