"""Carelessness flags on ratings and pairwise choices against hand-computed evidence."""

import math

import numpy as np
import pytest

from annotation.quality.integrity import rating_flags
from annotation.quality.integrity.thresholds import DEFAULTS, Thresholds


def test_straight_lining_reports_the_modal_share_and_the_longest_run():
    scores = [4] * 9 + [2] + [4] * 3
    flag = rating_flags.straight_lining(scores)
    assert flag.raised
    assert flag.evidence == {"answers": 13, "most_frequent": 4, "most_frequent_share": 12 / 13, "longest_run": 9}
    varied = [1, 2, 3, 4, 5] * 3
    assert not rating_flags.straight_lining(varied).raised
    assert not rating_flags.straight_lining([4] * 9).raised  # too few answers to judge


def test_near_zero_variance_uses_the_population_sd():
    # Ten answers, eight 3s and two 4s: mean 3.2, variance 0.16, sd 0.4 < 0.5.
    flag = rating_flags.near_zero_variance([3] * 8 + [4] * 2)
    assert flag.raised and flag.evidence["sd"] == pytest.approx(0.4)
    assert not rating_flags.near_zero_variance([1, 5] * 5).raised


def test_binomial_tail_by_hand():
    # 9 or more of 10 on one side: (C(10,9) + C(10,10)) / 2^10 = 11/1024, both sides doubled.
    assert rating_flags.binomial_two_sided(9, 10) == pytest.approx(22 / 1024)
    assert rating_flags.binomial_two_sided(1, 10) == pytest.approx(22 / 1024)
    assert rating_flags.binomial_two_sided(5, 10) == 1.0
    assert rating_flags.binomial_two_sided(0, 0) == 1.0


def test_one_side_always_counts_decisive_choices_only():
    sides = ["left"] * 11 + ["right"] + ["tie"] * 3
    flag = rating_flags.one_side_always(sides)
    assert flag.raised
    assert flag.evidence["side_share"] == pytest.approx(11 / 12)
    assert flag.evidence["favoured_side"] == "left" and flag.evidence["ties"] == 3
    assert flag.evidence["p_value_fair_coin"] == pytest.approx(2 * (math.comb(12, 11) + 1) / 2**12)
    assert not rating_flags.one_side_always(["left", "right"] * 10).raised


def test_too_fast_compares_a_workers_median_with_the_crowds():
    seconds = {"slow": [30.0] * 10, "steady": [20.0] * 10, "normal": [25.0] * 10, "rusher": [4.0] * 9 + [40.0]}
    flags = rating_flags.too_fast(seconds)
    # Worker medians 30, 20, 25, 4: the crowd's median is (20 + 25) / 2 = 22.5.
    rusher = flags["rusher"]
    assert rusher.raised
    assert rusher.evidence["crowd_median_seconds"] == 22.5
    assert rusher.evidence["ratio_to_crowd"] == pytest.approx(4 / 22.5)
    assert not flags["steady"].raised
    # Hurried answers: under a quarter of min(own median, crowd median); for "normal" 22.5 / 4 = 5.625.
    assert flags["normal"].evidence["hurried_bound_seconds"] == pytest.approx(5.625)
    assert flags["normal"].evidence["hurried_answers"] == 0
    # The rusher's own median (4 s) sets their bound: 1 s; their answers are not under it.
    assert rusher.evidence["hurried_bound_seconds"] == pytest.approx(1.0)
    mixed = rating_flags.too_fast({**seconds, "normal": [25.0] * 8 + [3.0, 5.0]})["normal"]
    assert mixed.evidence["hurried_positions"] == [8, 9] and not mixed.raised


def test_robust_z_by_hand():
    # Median 3; absolute deviations 2, 1, 0, 1, 7 -> MAD 1; robust sd 1.4826.
    z = rating_flags.robust_z({"a": 1, "b": 2, "c": 3, "d": 4, "e": 10})
    assert z["e"] == pytest.approx(7 / 1.4826)
    assert z["a"] == pytest.approx(-2 / 1.4826)
    # MAD 0 (most values equal): the mean absolute deviation stands in: (0+0+0+6)/4 · 1.2533.
    z = rating_flags.robust_z({"a": 1, "b": 1, "c": 1, "d": 7})
    assert z["d"] == pytest.approx(6 / (1.5 * 1.2533))
    assert rating_flags.robust_z({"a": 2, "b": 2}) == {"a": None, "b": None}


def test_leave_one_out_pairs_by_hand():
    ratings = [("a", "x", 1), ("b", "x", 3), ("c", "x", 5), ("a", "y", 2), ("solo", "z", 4)]
    pairs = rating_flags.leave_one_out_pairs(ratings)
    # x: a's others mean (3+5)/2 = 4, b's (1+5)/2 = 3, c's (1+3)/2 = 2; y and z have one rater only.
    assert pairs == {"a": [(1.0, 4.0)], "b": [(3.0, 3.0)], "c": [(5.0, 2.0)]}


def _crowd(seed=0, n_items=40):
    rng = np.random.default_rng(seed)
    quality = rng.uniform(1, 5, n_items)
    ratings = []
    for j in range(12):
        for i in range(n_items):
            ratings.append((f"w{j}", i, int(np.clip(np.rint(quality[i] + rng.normal(0, 0.5)), 1, 5))))
    return quality, ratings


def test_a_reversed_rater_is_far_from_consensus_and_a_harsh_one_is_not():
    quality, ratings = _crowd()
    ratings += [("reversed", i, int(np.clip(np.rint(6 - q), 1, 5))) for i, q in enumerate(quality)]
    ratings += [("harsh", i, int(np.clip(np.rint(q - 1), 1, 5))) for i, q in enumerate(quality)]
    flags = rating_flags.far_from_consensus(ratings)
    assert flags["reversed"].raised
    assert flags["reversed"].evidence["correlation_with_others"] < 0
    assert not flags["harsh"].raised
    # The harsh rater is off by about a point, which the mean absolute error shows but does not decide.
    assert flags["harsh"].evidence["mean_absolute_error"] > 0.7
    assert not any(flags[f"w{j}"].raised for j in range(12))


def test_a_constant_rater_has_no_correlation_and_is_left_to_straight_lining():
    _, ratings = _crowd(1)
    ratings += [("constant", i, 3) for i in range(40)]
    flag = rating_flags.far_from_consensus(ratings)["constant"]
    assert not flag.raised and flag.evidence["correlation_with_others"] is None


def test_thresholds_can_be_tightened():
    scores = [4] * 8 + [1, 2]
    assert not rating_flags.straight_lining(scores).raised
    assert rating_flags.straight_lining(scores, thresholds=Thresholds(straight_line_share=0.8)).raised


def test_closely_agreeing_raters_are_not_far_from_consensus_however_small_their_spread():
    # Three careful raters whose correlations with the others' mean sit within a few hundredths of each
    # other: the MAD is tiny, so the lowest one's robust z is huge, yet it follows the crowd as well as
    # anyone (seen on simulated four-rater studies before the gap floor).
    rng = np.random.default_rng(7)
    quality = rng.uniform(1, 5, 30)
    for seed in range(200):
        noise = np.random.default_rng(seed)
        ratings = [(f"w{j}", i, int(np.clip(np.rint(q + noise.normal(0, 0.6)), 1, 5)))
                   for j in range(3) for i, q in enumerate(quality)]
        flags = rating_flags.far_from_consensus(ratings)
        lowest = max(flags.values(), key=lambda f: f.evidence["robust_z"])
        if lowest.evidence["robust_z"] >= DEFAULTS.consensus_robust_z:
            break
    else:
        pytest.fail("no crowd of three with a robust z over the cut-off among 200 tried")
    assert lowest.evidence["below_crowd_median"] < DEFAULTS.consensus_min_gap
    assert not any(flag.raised for flag in flags.values())
