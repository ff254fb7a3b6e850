"""The alternative-annotator test (issue 39) against hand computations on tiny studies and an
independent t-test on a simulated one."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis.stats.alttest import (
    EPSILON,
    MIN_ITEMS,
    alignment,
    alt_test,
    benjamini_yekutieli,
    one_sided_p,
)

# Three annotators rate three items 1-5; the judge gives 1, 2, 3.
HUMANS = {"x": {1: 1, 2: 2, 3: 3}, "y": {1: 1, 2: 3, 3: 3}, "z": {1: 2, 2: 2, 3: 3}}
JUDGE = {1: 1, 2: 2, 3: 3}


def test_alignment_scores_follow_the_paper_definitions():
    # Remaining annotators said 1 and 3.
    # accuracy of "1": one of two agree = 0.5.
    assert alignment(1, [1, 3], "accuracy") == 0.5
    # neg_mae of 2: -(|1-2| + |3-2|) / 2 = -1; of 1: -(0 + 2) / 2 = -1 (a tie under MAE) ...
    assert alignment(2, [1, 3], "neg_mae") == -1.0
    assert alignment(1, [1, 3], "neg_mae") == -1.0
    # ... but RMSE prefers the middle: -sqrt((1 + 1) / 2) = -1 against -sqrt((0 + 4) / 2) = -1.41421.
    assert alignment(2, [1, 3], "neg_rmse") == -1.0
    assert alignment(1, [1, 3], "neg_rmse") == pytest.approx(-1.414214, abs=1e-6)
    with pytest.raises(ValueError):
        alignment(1, [1], "pearson")


def test_benjamini_yekutieli_rejects_the_hand_computed_set():
    # m = 4, H_4 = 1 + 1/2 + 1/3 + 1/4 = 25/12; thresholds k * 0.05 / (4 * 25/12) = 0.006 k:
    # 0.006, 0.012, 0.018, 0.024. Sorted p: 0.005 <= 0.006, 0.01 <= 0.012, 0.03 > 0.018, 0.04 > 0.024,
    # so the two smallest (indices 3 and 0) are rejected. (Benjamini-Hochberg would reject all four.)
    assert benjamini_yekutieli([0.01, 0.04, 0.03, 0.005]).tolist() == [True, False, False, True]
    assert benjamini_yekutieli([]).tolist() == []


def test_one_sided_p_handles_constant_differences_and_too_few_items():
    assert one_sided_p([0, 0, 0], 0.1) == 0.0  # every d below epsilon: certain
    assert one_sided_p([1, 1, 1], 0.1) == 1.0
    assert one_sided_p([0], 0.1) is None


def test_alt_test_on_three_annotators_matches_the_hand_computation():
    result = alt_test(HUMANS, JUDGE, scoring="neg_mae", epsilon=0.1)
    rows = {row["annotator"]: row for row in result["annotators"]}
    # Leave out x: on every item judge and x give the same rating, so both score the same: W_f = W_h = 1,
    # d = 0, 0, 0 < epsilon with no spread -> p = 0.
    assert rows["x"]["rho_judge"] == 1.0 and rows["x"]["rho_human"] == 1.0 and rows["x"]["p_value"] == 0.0
    # Leave out y: item 2, the others (x, z) said 2 and 2: judge 2 scores 0, y's 3 scores -1 -> W_f = 1, W_h = 0.
    # d = (0, -1, 0): mean -1/3, sd sqrt(1/3), se 1/3, t = (-1/3 - 0.1) / (1/3) = -1.3 with 2 df;
    # the t(2) CDF is 1/2 + t / (2 sqrt(2 + t^2)) = 0.5 - 1.3 / (2 * 1.920937) = 0.161624.
    assert rows["y"]["rho_human"] == pytest.approx(2 / 3)
    assert rows["y"]["p_value"] == pytest.approx(0.161624, abs=1e-6)
    # Leave out z: item 1, others x, y said 1, 1: judge 1 scores 0, z's 2 scores -1; d = (-1, 0, 0): same p.
    assert rows["z"]["p_value"] == pytest.approx(0.161624, abs=1e-6)
    # BY over (0, 0.1616, 0.1616) with H_3 = 11/6: thresholds 0.00909 k; only p = 0 passes.
    assert [rows[name]["judge_wins"] for name in "xyz"] == [True, False, False]
    assert result["omega"] == pytest.approx(1 / 3)
    assert result["rho"] == 1.0  # the judge never scores worse than a left-out human
    assert result["passes"] is False
    assert result["n_annotators"] == 3 and result["n_items"] == 3 and result["min_items_per_annotator"] == 3
    assert any(str(MIN_ITEMS) in warning for warning in result["warnings"])


def test_alt_test_accepts_pairwise_choices_under_accuracy():
    # Four annotators choose between responses a and b (or tie) on two items; the judge says a, b.
    humans = {
        "p": {"i1": "a", "i2": "b"},
        "q": {"i1": "a", "i2": "tie"},
        "r": {"i1": "b", "i2": "b"},
        "s": {"i1": "a", "i2": "b"},
    }
    result = alt_test(humans, {"i1": "a", "i2": "b"}, scoring="accuracy", epsilon=EPSILON["skilled"])
    rows = {row["annotator"]: row for row in result["annotators"]}
    # Leave out r: i1 others (a, a, a): judge a scores 1, r's b scores 0 -> W_f = 1, W_h = 0;
    # i2 others (b, tie, b): judge b 2/3, r's b 2/3 -> both 1. rho_judge 1, rho_human 1/2.
    assert rows["r"]["rho_judge"] == 1.0 and rows["r"]["rho_human"] == 0.5
    # Leave out q: i1 ties (both a); i2 others (b, b, b): judge b 1, q's tie 0 -> rho_human 1/2.
    assert rows["q"]["rho_human"] == 0.5
    assert result["epsilon"] == 0.15 and result["scoring"] == "accuracy"


def test_min_items_leaves_out_annotators_as_the_authors_code_does():
    result = alt_test(HUMANS, JUDGE, scoring="neg_mae", min_items=4)  # each annotator shares 3 items
    assert result["n_annotators"] == 0 and result["omega"] is None and result["passes"] is False
    assert any("left out" in warning for warning in result["warnings"])


def test_alt_test_warns_with_fewer_than_three_annotators():
    result = alt_test({"x": HUMANS["x"], "y": HUMANS["y"]}, JUDGE, scoring="neg_rmse")
    assert result["n_annotators"] == 2
    assert any("at least 3" in warning for warning in result["warnings"])


def test_a_judge_that_knows_the_truth_replaces_noisy_annotators():
    # Three annotators see the true 1-5 rating with noise on 60 items; the judge reports the truth.
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 60)
    humans = {name: {i: int(np.clip(truth[i] + rng.choice([-1, 0, 0, 1]), 1, 5)) for i in range(60)} for name in "abc"}
    judge = {i: int(truth[i]) for i in range(60)}
    result = alt_test(humans, judge, scoring="neg_rmse", epsilon=0.1)
    assert result["omega"] == 1.0 and result["passes"] and result["warnings"] == []
    # Independent check of one annotator's p-value: scipy's paired t-test of W_h - epsilon against W_f.
    for row in result["annotators"]:
        left_out = row["annotator"]
        wins_f, wins_h = [], []
        for i in range(60):
            others = [humans[n][i] for n in humans if n != left_out]
            f = -np.sqrt(np.mean((np.array(others) - judge[i]) ** 2))
            h = -np.sqrt(np.mean((np.array(others) - humans[left_out][i]) ** 2))
            wins_f.append(float(f >= h))
            wins_h.append(float(h >= f))
        expected = scipy_stats.ttest_rel(np.array(wins_h) - 0.1, wins_f, alternative="less").pvalue
        assert row["p_value"] == pytest.approx(expected, rel=1e-9)
    # A judge that answers at random does not pass.
    noisy = {i: int(rng.integers(1, 6)) for i in range(60)}
    assert alt_test(humans, noisy, scoring="neg_rmse")["passes"] is False
