"""Per-worker z-scores and weighted item scores against hand-computed values."""

import math

import pytest

from annotation.quality.integrity.normalise import plain_item_scores, weighted_item_scores, worker_z_scores


def test_z_scores_standardise_each_worker_by_their_own_mean_and_sd():
    # Harsh rater h: 1, 2, 3 (mean 2, population sd √(2/3)); lenient l: 3, 4, 5 (mean 4, same sd).
    ratings = [("h", "x", 1), ("h", "y", 2), ("h", "z", 3), ("l", "x", 3), ("l", "y", 4), ("l", "z", 5)]
    result = worker_z_scores(ratings)
    sd = math.sqrt(2 / 3)
    assert {(w, i): z for w, i, z in result.scores} == pytest.approx({
        ("h", "x"): -1 / sd, ("h", "y"): 0.0, ("h", "z"): 1 / sd,
        ("l", "x"): -1 / sd, ("l", "y"): 0.0, ("l", "z"): 1 / sd,
    })
    # After standardising, the two raters agree exactly on every item.
    assert result.item_means == pytest.approx({"x": -1 / sd, "y": 0.0, "z": 1 / sd})
    assert result.constant_workers == []


def test_workers_without_spread_get_no_z_score_and_are_named():
    ratings = [("same", "x", 4), ("same", "y", 4), ("once", "x", 2), ("v", "x", 1), ("v", "y", 5)]
    result = worker_z_scores(ratings)
    assert result.constant_workers == ["same", "once"]
    assert {w for w, _, _ in result.scores} == {"v"}
    assert result.item_means == pytest.approx({"x": -1.0, "y": 1.0})


def test_weighted_scores_are_competence_weighted_means():
    ratings = [("a", "x", 5), ("b", "x", 1), ("c", "x", 3), ("a", "y", 2), ("b", "y", 4)]
    weights = {"a": 0.9, "b": 0.1, "c": 0.5}
    scores = weighted_item_scores(ratings, weights)
    # x: (0.9·5 + 0.1·1 + 0.5·3) / 1.5 = 6.1 / 1.5; y: (0.9·2 + 0.1·4) / 1.0 = 2.2
    assert scores == pytest.approx({"x": 6.1 / 1.5, "y": 2.2})
    assert plain_item_scores(ratings) == pytest.approx({"x": 3.0, "y": 3.0})


def test_an_item_whose_raters_all_weigh_nothing_has_no_score():
    assert weighted_item_scores([("a", "x", 5)], {"a": 0.0}) == {"x": None}


def test_a_worker_without_a_weight_is_refused_unless_a_default_is_given():
    with pytest.raises(KeyError, match="typo"):
        weighted_item_scores([("typo", "x", 5)], {"a": 1.0})
    assert weighted_item_scores([("typo", "x", 5)], {"a": 1.0}, default_weight=0.5) == {"x": 5.0}
    with pytest.raises(ValueError, match="≥ 0"):
        weighted_item_scores([("a", "x", 5)], {"a": -1.0})
