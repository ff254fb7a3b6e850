"""Dawid-Skene against a hand-computed start, M-step and E-step, and fits on simulated raters."""

import math
from fractions import Fraction as F

import numpy as np
import pytest

from annotation.quality.integrity.coding import code_answers
from annotation.quality.integrity.dawid_skene import dawid_skene, e_step, m_step, vote_shares

# 3 workers × 4 items on a 3-point scale (w3 skipped i4).
ANSWERS = [
    ("w1", "i1", 1), ("w2", "i1", 1), ("w3", "i1", 2),
    ("w1", "i2", 2), ("w2", "i2", 2), ("w3", "i2", 2),
    ("w1", "i3", 3), ("w2", "i3", 3), ("w3", "i3", 1),
    ("w1", "i4", 1), ("w2", "i4", 2),
]
# Start, vote shares over classes 1, 2, 3:
#   i1 [2/3, 1/3, 0]   i2 [0, 1, 0]   i3 [1/3, 0, 2/3]   i4 [1/2, 1/2, 0]
START = [[F(2, 3), F(1, 3), 0], [0, 1, 0], [F(1, 3), 0, F(2, 3)], [F(1, 2), F(1, 2), 0]]
# M-step. Priors = column sums / 4: class 1 (2/3+1/3+1/2)/4 = 3/8, class 2 (1/3+1+1/2)/4 = 11/24,
# class 3 (2/3)/4 = 1/6.
PRIORS = [F(3, 8), F(11, 24), F(1, 6)]
# Confusion of w1 (answered 1 on i1 and i4, 2 on i2, 3 on i3): column l sums the rows of the items j
# answered l; each row divided by its total.
#   true 1: [2/3+1/2, 0, 1/3] / (3/2) = [7/9, 0, 2/9]
#   true 2: [1/3+1/2, 1, 0] / (11/6) = [5/11, 6/11, 0]
#   true 3: [0, 0, 2/3] / (2/3)      = [0, 0, 1]
# w2 (1 on i1; 2 on i2, i4; 3 on i3):
#   true 1: [2/3, 0+1/2, 1/3] / (3/2) = [4/9, 1/3, 2/9]
#   true 2: [1/3, 1+1/2, 0] / (11/6)  = [2/11, 9/11, 0]
#   true 3: [0, 0, 2/3] / (2/3)       = [0, 0, 1]
# w3 (2 on i1, i2; 1 on i3):
#   true 1: [1/3, 2/3, 0] / 1         = [1/3, 2/3, 0]
#   true 2: [0, 1+1/3, 0] / (4/3)     = [0, 1, 0]
#   true 3: [2/3, 0, 0] / (2/3)       = [1, 0, 0]
CONFUSION = [
    [[F(7, 9), 0, F(2, 9)], [F(5, 11), F(6, 11), 0], [0, 0, 1]],
    [[F(4, 9), F(1, 3), F(2, 9)], [F(2, 11), F(9, 11), 0], [0, 0, 1]],
    [[F(1, 3), F(2, 3), 0], [0, 1, 0], [1, 0, 0]],
]
# E-step, T[i, k] ∝ p_k Π_j π_j[k, a_ij]:
#   i1 (1,1,2): k1 3/8·7/9·4/9·2/3 = 7/81, k2 11/24·5/11·2/11·1 = 5/132, k3 1/6·0 = 0
#   i2 (2,2,2): k1 3/8·0 = 0, k2 11/24·6/11·9/11·1 = 9/44, k3 1/6·0 = 0
#   i3 (3,3,1): k1 3/8·2/9·2/9·1/3 = 1/162, k2 11/24·0 = 0, k3 1/6·1·1·1 = 1/6
#   i4 (1,2):   k1 3/8·7/9·1/3 = 7/72, k2 11/24·5/11·9/11 = 15/88, k3 1/6·0 = 0
UNNORMALISED = [[F(7, 81), F(5, 132), 0], [0, F(9, 44), 0], [F(1, 162), 0, F(1, 6)], [F(7, 72), F(15, 88), 0]]


def _coded():
    return code_answers(ANSWERS, labels=[1, 2, 3])


def _floats(rows):
    return np.array([[float(x) for x in row] for row in rows])


def test_the_start_is_each_items_vote_shares():
    assert vote_shares(_coded()) == pytest.approx(_floats(START), abs=1e-12)


def test_m_step_matches_the_hand_computed_priors_and_confusion_matrices():
    priors, confusion = m_step(_coded(), _floats(START), smoothing=0.0)
    assert priors == pytest.approx([float(p) for p in PRIORS], abs=1e-9)
    for j in range(3):
        assert confusion[j] == pytest.approx(_floats(CONFUSION[j]), abs=1e-9)


def test_e_step_matches_the_hand_computed_posteriors_and_log_likelihood():
    priors, confusion = m_step(_coded(), _floats(START), smoothing=0.0)
    posteriors, log_likelihood = e_step(_coded(), priors, confusion)
    expected = [[x / sum(row) for x in row] for row in UNNORMALISED]
    assert posteriors == pytest.approx(_floats(expected), abs=1e-9)
    assert log_likelihood == pytest.approx(sum(math.log(sum(row)) for row in UNNORMALISED), abs=1e-9)


def test_an_item_no_class_can_explain_is_refused_without_smoothing():
    # w3 answers 3 on an item whose voters all say 1: with no smoothing, w3's row for class 1 has 0 for 3.
    answers = [("w1", "a", 1), ("w2", "a", 1), ("w1", "b", 2), ("w2", "b", 2), ("w3", "b", 2),
               ("w1", "c", 1), ("w2", "c", 2), ("w3", "c", 3)]
    coded = code_answers(answers, labels=[1, 2, 3])
    priors, confusion = m_step(coded, vote_shares(coded), smoothing=0.0)
    confusion[2, :, 2] = 0.0  # w3 can never say 3 under any class
    with pytest.raises(ValueError, match="smoothing"):
        e_step(coded, priors, confusion)


def _ratings(seed, noise_by_worker, n_items=250):
    """Dawid-Skene's own model: a true class per item; a rater gives it, or with probability `noise` a
    uniformly random class."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, n_items)
    answers = []
    for worker, noise in noise_by_worker.items():
        for i in range(n_items):
            score = int(rng.integers(1, 6)) if rng.random() < noise else int(truth[i])
            answers.append((worker, i, score))
    return truth, answers


def test_fit_ranks_raters_by_their_noise_and_iterates_until_the_likelihood_settles():
    noise = {"a": 0.0, "b": 0.1, "c": 0.3, "d": 0.6, "e": 0.9}
    _, answers = _ratings(5, noise)
    result = dawid_skene(answers, labels=[1, 2, 3, 4, 5])
    accuracy = [result.competence[w] for w in noise]
    distance = [result.expected_distance[w] for w in noise]
    assert accuracy == sorted(accuracy, reverse=True)
    assert distance == sorted(distance)
    # EM never lowers the likelihood.
    assert all(b >= a - 1e-9 for a, b in zip(result.history, result.history[1:], strict=False))
    assert result.iterations == len(result.history)
    assert sum(result.priors.values()) == pytest.approx(1.0)


def test_posteriors_follow_the_reliable_raters_against_a_noisy_majority():
    # Two careful raters are outvoted by three who answer at random on most items.
    noise = {"good1": 0.0, "good2": 0.0, "bad1": 0.8, "bad2": 0.8, "bad3": 0.8}
    truth, answers = _ratings(8, noise)
    result = dawid_skene(answers, labels=[1, 2, 3, 4, 5])
    ds_right = np.mean([result.predicted[i] == truth[i] for i in range(len(truth))])
    votes = {}
    for _, item, score in answers:
        votes.setdefault(item, []).append(score)
    majority_right = np.mean([max(set(v), key=v.count) == truth[i] for i, v in votes.items()])
    assert ds_right > majority_right + 0.1


def test_labels_that_are_not_numbers_get_no_expected_distance():
    result = dawid_skene([("a", 1, "yes"), ("b", 1, "yes"), ("a", 2, "no"), ("b", 2, "yes")])
    assert result.expected_distance == {}
    assert set(result.competence) == {"a", "b"}
