"""The shared-confusion spammer model against a hand-computed start, E-step and M-step, and on simulated
raters (a straight-liner and careless raters ranked below careful ones)."""

import math
from fractions import Fraction as F

import numpy as np
import pytest

from annotation.quality.integrity.coding import code_answers
from annotation.quality.integrity.simulation import SCALE, simulate_crowd
from annotation.quality.integrity.spammer_scale import (
    e_step,
    m_step,
    pooled_competence,
    spammer_scale,
    start,
)

# Two workers, two items, labels 1 and 2; smoothing 1, θ starts at 1/2.
ANSWERS = [("w1", "i1", 1), ("w2", "i1", 1), ("w1", "i2", 2), ("w2", "i2", 1)]
# Vote shares T: i1 [1, 0], i2 [1/2, 1/2].
# Start C[t, a] ∝ Σ_{answers a} T[i, t] + 1: label 1 (i1, i1, i2) adds t1 5/2, t2 1/2; label 2 (i2) adds 1/2, 1/2.
#   C[1] = [7/2, 3/2] / 5 = [7/10, 3/10];  C[2] = [3/2, 3/2] / 3 = [1/2, 1/2]
# Priors (Σ_i T + 1) / (2 + 2) = [5/8, 3/8]; ξ uniform 1/2.
START_C = [[F(7, 10), F(3, 10)], [F(1, 2), F(1, 2)]]
START_PRIORS = [F(5, 8), F(3, 8)]
# E-step. An answer's likelihood given t: 1/2 C[t, a] + 1/4.
#   label 1: t1 3/5, t2 1/2;  label 2: t1 2/5, t2 1/2
#   i1 (1, 1): t1 5/8 · 9/25 = 9/40, t2 3/8 · 1/4 = 3/32 → T = [12/17, 5/17]
#   i2 (2, 1): t1 5/8 · 2/5 · 3/5 = 3/20, t2 3/32 → T = [8/13, 5/13]
POSTERIORS = [[F(12, 17), F(5, 17)], [F(8, 13), F(5, 13)]]
LOG_LIKELIHOOD = math.log(9 / 40 + 3 / 32) + math.log(3 / 20 + 3 / 32)
# R = careful / total: label 1 t1 (7/20)/(3/5) = 7/12, t2 1/2; label 2 t1 (3/20)/(2/5) = 3/8, t2 1/2.
RESPONSIBILITIES = [[F(7, 12), F(1, 2)], [F(7, 12), F(1, 2)], [F(3, 8), F(1, 2)], [F(7, 12), F(1, 2)]]
# M-step. careful_o = Σ_t T R: w1·i1 and w2·i1 12/17·7/12 + 5/17·1/2 = 19/34; w1·i2 8/13·3/8 + 5/13·1/2 = 11/26;
# w2·i2 8/13·7/12 + 5/26 = 43/78.
CAREFUL = {"w1": [F(19, 34), F(11, 26)], "w2": [F(19, 34), F(43, 78)]}
THETA = [(sum(CAREFUL[w]) + 1) / 4 for w in ("w1", "w2")]
# ξ_w1: label 1 gets 1 - 19/34 = 15/34, label 2 1 - 11/26 = 15/26; each + 1, normalised.
XI_W1 = [(F(15, 34) + 1), (F(15, 26) + 1)]
# C: label 1 column t1 = 12/17·7/12 ·2 + 8/13·7/12 = 14/17 + 14/39; t2 = 5/17·1/2·2 + 5/13·1/2 = 5/17 + 5/26;
#    label 2 column t1 = 8/13·3/8 = 3/13; t2 = 5/26.
C_ROWS = [[F(14, 17) + F(14, 39) + 1, F(3, 13) + 1], [F(5, 17) + F(5, 26) + 1, F(5, 26) + 1]]
PRIORS = [(F(12, 17) + F(8, 13) + 1) / 4, (F(5, 17) + F(5, 13) + 1) / 4]


def _close(actual, expected):
    assert np.allclose(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float), atol=1e-12)


def test_start_e_step_and_m_step_match_the_hand_computation():
    coded = code_answers(ANSWERS, labels=[1, 2])
    priors, competence, confusion, strategy = start(coded, smoothing=1.0, start_competence=0.5)
    _close(confusion, START_C)
    _close(priors, START_PRIORS)
    _close(strategy, [[0.5, 0.5], [0.5, 0.5]])
    posteriors, responsibilities, log_likelihood = e_step(coded, priors, competence, confusion, strategy)
    _close(posteriors, POSTERIORS)
    _close(responsibilities, RESPONSIBILITIES)
    assert log_likelihood == pytest.approx(LOG_LIKELIHOOD, abs=1e-12)
    priors, competence, confusion, strategy = m_step(coded, posteriors, responsibilities, smoothing=1.0)
    _close(competence, THETA)
    _close(strategy[0], [v / sum(XI_W1) for v in XI_W1])
    _close(confusion, [[v / sum(row) for v in row] for row in C_ROWS])
    _close(priors, PRIORS)


def test_the_log_likelihood_never_falls_and_the_fit_is_deterministic():
    study = simulate_crowd(seed=3)
    fitted = spammer_scale(study.ratings, labels=list(SCALE))
    assert all(b >= a - 1e-9 for a, b in zip(fitted.history, fitted.history[1:], strict=False))
    assert spammer_scale(study.ratings, labels=list(SCALE)).competence == fitted.competence


def test_careless_and_straight_lining_raters_rank_below_careful_ones():
    study = simulate_crowd(seed=3)
    fitted = spammer_scale(study.ratings, labels=list(SCALE))
    careful = [fitted.competence[w.worker] for w in study.workers if w.role == "careful"]
    for worker in study.workers:
        if worker.role == "straight_liner":
            assert fitted.competence[worker.worker] < min(careful)
    careless = [fitted.competence[w.worker] for w in study.workers if w.role == "careless"]
    assert np.median(careless) < np.percentile(careful, 10)


def test_pooled_competence_weighs_each_estimate_by_its_answers():
    pooled = pooled_competence([({"a": 0.9, "b": 0.5}, {"a": 40, "b": 40}), ({"a": 0.6}, {"a": 20})])
    assert pooled["a"] == pytest.approx((0.9 * 40 + 0.6 * 20) / 60)
    assert pooled["b"] == 0.5


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="smoothing"):
        spammer_scale(ANSWERS, smoothing=0)
    with pytest.raises(ValueError, match="start_competence"):
        spammer_scale(ANSWERS, start_competence=1.0)
