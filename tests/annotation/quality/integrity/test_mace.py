"""MACE against one hand-computed EM step, the variational update against Beta integrals, and fits."""

import math
from fractions import Fraction as F

import numpy as np
import pytest
from scipy import integrate
from scipy import stats as scipy_stats

from annotation.quality.integrity import mace as mace_module
from annotation.quality.integrity.coding import code_answers
from annotation.quality.integrity.mace import MaceParameters, e_step, log_likelihood, m_step, mace

# 3 workers × 4 items, labels 0/1 (w2 skipped i4, w3 skipped i3).
ANSWERS = [
    ("w1", "i1", 0), ("w2", "i1", 0), ("w3", "i1", 0),
    ("w1", "i2", 1), ("w2", "i2", 1), ("w3", "i2", 0),
    ("w1", "i3", 0), ("w2", "i3", 1),
    ("w1", "i4", 1), ("w3", "i4", 1),
]
THETA = np.array([0.8, 0.5, 0.2])
XI = np.full((3, 2), 0.5)

# By hand. With ξ = 1/2, P(answer | true = answer) = θ + (1-θ)/2 = (1+θ)/2 and P(answer | other) = (1-θ)/2:
#   w1 0.9 / 0.1, w2 0.75 / 0.25, w3 0.6 / 0.4.
# E-step, posteriors (uniform prior over the true label):
#   i1 (0,0,0): t=0 .9·.75·.6 = .405, t=1 .1·.25·.4 = .01    -> P(0) = .405/.415 = 81/83
#   i2 (1,1,0): t=1 .9·.75·.4 = .27,  t=0 .1·.25·.6 = .015   -> P(1) = .27/.285 = 18/19
#   i3 (0,1):   t=0 .9·.25 = .225,    t=1 .1·.75 = .075      -> P(0) = 3/4
#   i4 (1,1):   t=1 .9·.6 = .54,      t=0 .1·.4 = .04        -> P(1) = .54/.58 = 27/29
POSTERIOR_OF_0 = [F(81, 83), F(1, 19), F(3, 4), F(2, 29)]
# "Knew it" per answer = P(true = answer) · θ / ((1+θ)/2); the factor θ/((1+θ)/2) is 8/9, 2/3, 1/3.
KNEW = [
    F(81, 83) * F(8, 9), F(81, 83) * F(2, 3), F(81, 83) * F(1, 3),  # i1: 72/83, 54/83, 27/83
    F(18, 19) * F(8, 9), F(18, 19) * F(2, 3), F(1, 19) * F(1, 3),  # i2: 16/19, 12/19, 1/57
    F(3, 4) * F(8, 9), F(1, 4) * F(2, 3),  # i3: 2/3, 1/6
    F(27, 29) * F(8, 9), F(27, 29) * F(1, 3),  # i4: 24/29, 9/29
]
# M-step (EM, no smoothing): θ_j = mean "knew it" of j's answers; ξ_j(a) = j's "spammed" (1 - knew)
# answers a / all j's spammed answers.
#   θ1 = (72/83 + 16/19 + 2/3 + 24/29) / 4,  θ2 = (54/83 + 12/19 + 1/6) / 3,  θ3 = (27/83 + 1/57 + 9/29) / 3
#   ξ1(0) = (11/83 + 1/3) / (11/83 + 1/3 + 3/19 + 5/29)     (w1 said 0 on i1, i3; 1 on i2, i4)
#   ξ2(0) = (29/83) / (29/83 + 7/19 + 5/6)                   (w2 said 0 on i1; 1 on i2, i3)
#   ξ3(0) = (56/83 + 56/57) / (56/83 + 56/57 + 20/29)        (w3 said 0 on i1, i2; 1 on i4)
THETA_NEXT = [
    (F(72, 83) + F(16, 19) + F(2, 3) + F(24, 29)) / 4,
    (F(54, 83) + F(12, 19) + F(1, 6)) / 3,
    (F(27, 83) + F(1, 57) + F(9, 29)) / 3,
]
XI_NEXT_OF_0 = [
    (F(11, 83) + F(1, 3)) / (F(11, 83) + F(1, 3) + F(3, 19) + F(5, 29)),
    F(29, 83) / (F(29, 83) + F(7, 19) + F(5, 6)),
    (F(56, 83) + F(56, 57)) / (F(56, 83) + F(56, 57) + F(20, 29)),
]


def _coded():
    return code_answers(ANSWERS, labels=[0, 1])


def _parameters():
    return MaceParameters(know=THETA, spam=1 - THETA, strategy=XI, competence=THETA)


def test_e_step_matches_the_hand_computed_posteriors_and_knew_it_counts():
    posteriors, knew = e_step(_coded(), _parameters())
    assert posteriors[:, 0] == pytest.approx([float(p) for p in POSTERIOR_OF_0], abs=1e-9)
    assert posteriors.sum(axis=1) == pytest.approx(np.ones(4), abs=1e-12)
    assert knew == pytest.approx([float(k) for k in KNEW], abs=1e-9)


def test_em_m_step_matches_the_hand_computed_competence_and_spamming_distribution():
    coded = _coded()
    _, knew = e_step(coded, _parameters())
    updated = m_step(coded, knew, method="em", smoothing=0.0)
    assert updated.competence == pytest.approx([float(t) for t in THETA_NEXT], abs=1e-9)
    assert updated.strategy[:, 0] == pytest.approx([float(x) for x in XI_NEXT_OF_0], abs=1e-9)
    assert updated.strategy.sum(axis=1) == pytest.approx(np.ones(3), abs=1e-12)


def test_log_likelihood_is_the_hand_computed_marginal():
    # Σ_i log Σ_t ½ Π_j P(a_ij | t), the per-label products from the E-step above.
    expected = sum(math.log((x + y) / 2) for x, y in [(.405, .01), (.27, .015), (.225, .075), (.54, .04)])
    assert log_likelihood(_coded(), THETA, XI) == pytest.approx(expected, abs=1e-9)


def _expected_log(a, b):
    """E[log x] under Beta(a, b), by numerical integration (independent of the digamma identity)."""
    value, _ = integrate.quad(lambda x: math.log(x) * scipy_stats.beta.pdf(x, a, b), 0, 1, limit=200)
    return value


def test_variational_m_step_keeps_the_geometric_means_of_the_beta_posterior():
    coded = _coded()
    _, knew = e_step(coded, _parameters())
    updated = m_step(coded, knew, method="vb", alpha=0.5, beta=0.5, strategy_prior=1.0)
    knew_w1 = float(sum(KNEW[k] for k in (0, 3, 6, 8)))
    a, b = knew_w1 + 0.5, 4 - knew_w1 + 0.5
    assert updated.know[0] == pytest.approx(math.exp(_expected_log(a, b)), abs=1e-7)
    assert updated.spam[0] == pytest.approx(math.exp(_expected_log(b, a)), abs=1e-7)
    # Reported competence: the posterior mean a / (a + b).
    assert updated.competence[0] == pytest.approx(a / (a + b), abs=1e-12)
    # exp(E[log]) lies below the mean (Jensen), so "knew" and "spammed" weights sum to less than 1.
    assert updated.know[0] + updated.spam[0] < 1


def _simulated(seed, competences, n_items=300, n_labels=3):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, n_labels, n_items)
    answers = []
    for j, theta in enumerate(competences):
        for i in range(n_items):
            label = truth[i] if rng.random() < theta else rng.integers(0, n_labels)
            answers.append((f"w{j}", i, int(label)))
    return truth, answers


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_ranks_workers_by_competence_and_recovers_the_labels(method):
    competences = [0.9, 0.8, 0.6, 0.4, 0.1]
    truth, answers = _simulated(1, competences)
    result = mace(answers, labels=[0, 1, 2], method=method, restarts=5, seed=3)
    estimated = [result.competence[f"w{j}"] for j in range(5)]
    assert estimated == sorted(estimated, reverse=True)
    assert abs(estimated[0] - 0.9) < 0.06 and estimated[-1] < 0.25
    accuracy = np.mean([result.predicted[i] == truth[i] for i in range(len(truth))])
    votes = np.zeros((len(truth), 3))
    for _, item, label in answers:
        votes[item, label] += 1
    majority = np.mean(votes.argmax(axis=1) == truth)
    assert accuracy > 0.9 and accuracy >= majority


def test_a_worker_who_always_gives_one_label_is_a_spammer_with_that_strategy():
    _, answers = _simulated(2, [0.9, 0.85, 0.8])
    answers += [("always_b", i, 1) for i in range(300)]
    result = mace(answers, labels=[0, 1, 2], seed=0)
    assert result.competence["always_b"] < 0.45
    assert result.strategy["always_b"][1] > 0.95


def test_restarts_are_seeded_and_the_best_log_likelihood_is_kept():
    _, answers = _simulated(4, [0.7, 0.5, 0.3], n_items=60)
    first = mace(answers, restarts=4, seed=11)
    again = mace(answers, restarts=4, seed=11)
    assert first.competence == again.competence
    assert len(first.restarts) == 4
    assert first.log_likelihood == max(first.restarts)


def test_confident_items_are_those_with_the_lowest_posterior_entropy():
    result = mace(ANSWERS, labels=[0, 1], restarts=2)
    confident = result.confident_items(0.5)
    assert len(confident) == 2
    assert max(result.entropy[i] for i in confident) <= min(
        result.entropy[i] for i in result.entropy if i not in confident)
    # Entropy in nats, at most log 2 for two labels.
    assert all(0 <= e <= math.log(2) + 1e-12 for e in result.entropy.values())
    with pytest.raises(ValueError):
        result.confident_items(0)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="more than once"):
        mace([("w", "i", 0), ("w", "i", 1)])
    with pytest.raises(ValueError, match="not among the labels"):
        mace([("w", "i", 2)], labels=[0, 1])
    with pytest.raises(ValueError, match="method"):
        mace(ANSWERS, method="gibbs")
    assert mace_module.METHODS == ("vb", "em")
