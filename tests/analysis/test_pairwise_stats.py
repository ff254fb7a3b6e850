"""Pairwise statistics, without a database: Bradley-Terry against an independent fit (choix),
Wilson intervals, tie-calibrated pairwise accuracy and Kendall's tau."""

import choix
import numpy as np
import pytest

from analysis.stats import pairwise as pw


def _simulated(n=3000, n_systems=5, seed=7):
    rng = np.random.default_rng(seed)
    true = np.linspace(-1, 1, n_systems)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    p = 1 / (1 + np.exp(true[b] - true[a]))
    u = rng.random(n)
    outcome = np.where(u < 0.85 * p, 1.0, np.where(u > 1 - 0.85 * (1 - p), 0.0, 0.5))
    context = rng.integers(0, 300, n)
    return context, a, b, outcome, true


def test_bradley_terry_agrees_with_an_independent_fit_by_choix_on_the_same_data():
    _, a, b, outcome, _ = _simulated()
    ours = pw.bradley_terry(pw.win_counts(a, b, outcome, 5))
    # choix takes (winner, loser) pairs and has no ties: every decisive judgement twice and a tie
    # once each way is the same likelihood as ties counted half, doubled.
    data = []
    for i, j, o in zip(a, b, outcome, strict=True):
        if o == 0.5:
            data += [(i, j), (j, i)]
        else:
            data += [(i, j)] * 2 if o == 1 else [(j, i)] * 2
    theirs = choix.opt_pairwise(5, data, alpha=1e-6)
    theirs = theirs - theirs.mean()
    np.testing.assert_allclose(ours, theirs, atol=1e-3)
    assert abs(ours.mean()) < 1e-9


def test_the_joint_bootstrap_fit_equals_one_fit_per_resample():
    context, a, b, outcome, _ = _simulated(n=800)
    per_context = pw.context_win_tensor(context, a, b, outcome, n_contexts=300, n_systems=5)
    matrices = (np.random.default_rng(0).multinomial(300, np.full(300, 1 / 300), size=4) @ per_context).reshape(4, 5, 5)
    joint = pw.bradley_terry_batch(matrices)
    one_by_one = np.stack([pw.bradley_terry(m) for m in matrices])
    np.testing.assert_allclose(joint, one_by_one, atol=1e-4)


def test_the_ranking_recovers_the_simulated_order_with_intervals_around_each_strength():
    context, a, b, outcome, _ = _simulated()
    result = pw.ranking([f"s{i}" for i in range(5)], context, a, b, outcome, n_boot=200)
    assert [row["system"] for row in result["systems"]] == ["s4", "s3", "s2", "s1", "s0"]
    for row in result["systems"]:
        assert row["ci_low"] < row["strength"] < row["ci_high"]
        assert set(row) == {"system", "strength", "ci_low", "ci_high", "wins", "losses", "ties"}
    assert len(result["adjacent"]) == 4 and all(0 <= row["p_value"] <= 1 for row in result["adjacent"])
    assert result["adjacent"][0]["significant"], "0.5 apart on 3,000 judgements is clearly separated"


def test_wilson_interval_matches_the_textbook_formula():
    low, high = pw.wilson(7, 10)
    z, p, n = 1.959963984540054, 0.7, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert low == pytest.approx(centre - half) and high == pytest.approx(centre + half)
    assert np.isnan(pw.wilson(0, 0)[0])


def test_the_matrix_counts_wins_losses_and_ties_of_each_ordered_pair():
    a, b = np.array([0, 0, 1, 0]), np.array([1, 1, 0, 2])
    rows = pw.matrix_table(["x", "y", "z"], a, b, np.array([1.0, 0.5, 1.0, 0.0]))
    x_vs_y = next(r for r in rows if (r["system"], r["opponent"]) == ("x", "y"))
    assert (x_vs_y["wins"], x_vs_y["losses"], x_vs_y["ties"], x_vs_y["win_rate"]) == (1, 1, 1, 0.5)
    z_vs_x = next(r for r in rows if (r["system"], r["opponent"]) == ("z", "x"))
    assert (z_vs_x["wins"], z_vs_x["losses"]) == (1, 0)


def test_tie_calibration_counts_small_metric_differences_as_ties_when_that_agrees_better():
    # Humans: a, b, tie, tie. Metric differences: +1, -1, +0.01, -0.02.
    accuracy, epsilon = pw.tie_calibrated_accuracy([1, 0, 0.51, 0.48], [0, 1, 0.5, 0.5], [1, 0, 0.5, 0.5])
    assert accuracy == 1.0 and epsilon == pytest.approx(0.02)
    # Without human ties, calling none is best: plain pairwise accuracy (3 of 4 ordered right).
    accuracy, epsilon = pw.tie_calibrated_accuracy([1, 0, 2, 0], [0, 1, 1, 3], [1, 0, 1, 1])
    assert (accuracy, epsilon) == (0.75, 0.0)


def test_kendall_tau_is_none_when_undefined():
    assert pw.kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert pw.kendall_tau([1, np.nan], [1, 2]) is None
