"""Judge calibration statistics (issue 39) against hand computations on a four-response study."""

import numpy as np
import pytest

from analysis.stats.calibration import (
    calibration,
    confusion_matrix,
    human_reference,
    position_consistency,
    scale_use,
    system_bias,
)

SCALE = range(1, 6)
JUDGE = [1, 2, 5, 4]
RATINGS = [[1, 2], [2, 2, 3], [5], [3, 4]]
SYSTEMS = ["a", "b", "a", "b"]


def test_human_reference_mean_and_majority():
    assert human_reference(RATINGS, "mean") == pytest.approx([1.5, 7 / 3, 5.0, 3.5])
    # Majority: [1, 2] tie at mean 1.5, equally near -> the lower, 1; [2, 2, 3] -> 2; [3, 4] tie at 3.5 -> 3.
    assert human_reference(RATINGS, "majority").tolist() == [1.0, 2.0, 5.0, 3.0]
    # The mode nearest the mean wins a tie: [1, 1, 4, 4, 5] has modes 1 and 4, mean 3 -> 4.
    assert human_reference([[1, 1, 4, 4, 5]], "majority").tolist() == [4.0]
    assert np.isnan(human_reference([[]])[0])


def test_calibration_matches_the_hand_computation():
    result = calibration(JUDGE, RATINGS, scale=SCALE, systems=SYSTEMS)
    # Human means 1.5, 2.33, 5, 3.5 round half-up to 2, 2, 5, 4; the judge says 1, 2, 5, 4.
    expected = np.zeros((5, 5), dtype=int)
    for judge, human in [(1, 2), (2, 2), (5, 5), (4, 4)]:
        expected[judge - 1, human - 1] += 1
    assert result["confusion"] == expected.tolist()
    # Unweighted: observed agreement 3/4; judge marginals 1/4 each on 1, 2, 4, 5, humans 2/4 on 2 and
    # 1/4 on 4 and 5: chance = 1/4*2/4 + 1/4*1/4 + 1/4*1/4 = 1/4; kappa = (3/4 - 1/4) / (3/4) = 2/3.
    assert result["kappa"] == pytest.approx(2 / 3)
    # Linear: observed weighted disagreement 1 (the 1-vs-2 pair); expected sum |i-j| r_i c_j / n =
    # (9 + 5 + 5 + 7) / 4 = 6.5, so 1 - 1/6.5. Quadratic: (27 + 13 + 9 + 19) / 4 = 17, so 1 - 1/17.
    assert result["kappa_linear"] == pytest.approx(1 - 1 / 6.5)
    assert result["kappa_quadratic"] == pytest.approx(1 - 1 / 17)
    # Offsets judge - mean: -0.5, -1/3, 0, +0.5 -> mean -1/12, mean absolute 1/3.
    assert result["mean_offset"] == pytest.approx(-1 / 12)
    assert result["mean_absolute_error"] == pytest.approx(1 / 3)
    assert result["scale_use"]["judge"] == {1: 0.25, 2: 0.25, 3: 0.0, 4: 0.25, 5: 0.25}
    # Humans' eight ratings 1, 2, 2, 2, 3, 5, 3, 4.
    assert result["scale_use"]["humans"] == {1: 1 / 8, 2: 3 / 8, 3: 2 / 8, 4: 1 / 8, 5: 1 / 8}
    # System a: offsets -0.5 and 0 -> -0.25; b: -1/3 and 0.5 -> 1/12; relative to -1/12: -1/6 and +1/6.
    systems = {row["system"]: row for row in result["systems"]}
    assert systems["a"]["offset"] == pytest.approx(-0.25)
    assert systems["b"]["relative_bias"] == pytest.approx(1 / 6)
    assert [row["system"] for row in result["systems"]] == ["b", "a"]  # the favoured system first


def test_calibration_against_the_majority_label_uses_it_for_the_confusion_matrix():
    result = calibration(JUDGE, RATINGS, scale=SCALE, reference="majority")
    # Majority 1, 2, 5, 3 against the judge 1, 2, 5, 4: three on the diagonal, one judge-4-human-3.
    assert np.trace(np.array(result["confusion"])) == 3
    assert result["confusion"][3][2] == 1
    assert result["mean_offset"] == pytest.approx(-1 / 12)  # the offset is always against the mean


def test_unjudged_responses_are_left_out():
    result = calibration([np.nan, 2, 5, 4], RATINGS, scale=SCALE)
    assert result["n"] == 3
    assert result["kappa"] == pytest.approx(1.0)  # 2/2, 5/5, 4/4 all agree
    assert confusion_matrix([], [], SCALE).sum() == 0
    assert scale_use([], SCALE) == dict.fromkeys(SCALE, 0.0)


def test_system_bias_without_any_defined_pair_is_empty():
    assert system_bias([np.nan], [3.0], ["a"]) == []


def test_position_consistency_counts_agreeing_swaps_and_first_position_wins():
    # Pair 1: first wins (A), swapped second wins (A again): consistent. Pair 2: first wins both times
    # (A, then B): inconsistent. Pair 3: tie both times: consistent. Pair 4: first both times: inconsistent.
    result = position_consistency([1, 1, 0.5, 1], [0, 1, 0.5, 1])
    assert result == {"n": 4, "consistent": 0.5, "first_position_wins": pytest.approx(5 / 6)}
    # Decisive verdicts 1, 1, 1 (shown) and 0, 1, 1 (swapped): five of six went to the first shown.
    assert position_consistency([], [])["consistent"] is None
