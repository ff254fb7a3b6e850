"""The ordinal spammer model against one hand-computed E-step and M-step, and on small simulated crowds
(a rater answering at random and a straight-liner ranked below careful raters)."""

import math

import numpy as np
import pytest

from annotation.quality.integrity.coding import code_answers
from annotation.quality.integrity.ordinal_spammer import (
    OrdinalSpammerParameters,
    careful_likelihood,
    e_step,
    m_step,
    ordinal_spammer,
    value_grid,
)


def phi(x):
    """The standard normal distribution function from math.erfc (not the scipy the model uses); erfc keeps
    the far lower tail exact where 1 + erf would round to 0."""
    return 0.5 * math.erfc(-x / math.sqrt(2))


# Labels 1, 2, 3 (positions 0, 1, 2); grid step 1, so the latent values are 0, 1, 2. Start: σ = 1, θ = 1/2,
# ξ uniform 1/3, π uniform 1/3.
# L[g, a] with σ = 1, from a = Φ(0.5) ≈ 0.6915 and b = Φ(1.5) ≈ 0.9332 (Φ(-x) = 1 - Φ(x)):
#   g = 0: [Φ(0.5), Φ(1.5) - Φ(0.5), 1 - Φ(1.5)]   ≈ [0.6915, 0.2417, 0.0668]
#   g = 1: [1 - Φ(0.5), 2Φ(0.5) - 1, 1 - Φ(0.5)]   ≈ [0.3085, 0.3829, 0.3085]
#   g = 2: [1 - Φ(1.5), Φ(1.5) - Φ(0.5), Φ(0.5)]   ≈ [0.0668, 0.2417, 0.6915]
A, B = phi(0.5), phi(1.5)
L = [[A, B - A, 1 - B], [1 - A, 2 * A - 1, 1 - A], [1 - B, B - A, A]]
# w1 rates i1, i2, i3 as 1, 2, 3; w2 as 1, 3, 1.
ANSWERS = [("w1", "i1", 1), ("w2", "i1", 1), ("w1", "i2", 2), ("w2", "i2", 3), ("w1", "i3", 3), ("w2", "i3", 1)]


def f(g, a):
    """One answer's likelihood given v = g: θ L[g, a] + (1 - θ) ξ(a) = L/2 + 1/6."""
    return L[g][a] / 2 + 1 / 6


def normalised(values):
    return [v / sum(values) for v in values]


# E-step: T[i, g] ∝ 1/3 · Π over the item's answers of f(g, a).
#   i1 (1, 1) ≈ [0.6473, 0.2540, 0.0987];  i2 (2, 3) ≈ [0.1799, 0.3594, 0.4607];  i3 (3, 1) ≈ [0.3328, 0.3344, 0.3328]
T1 = normalised([f(g, 0) * f(g, 0) / 3 for g in range(3)])
T2 = normalised([f(g, 1) * f(g, 2) / 3 for g in range(3)])
T3 = normalised([f(g, 2) * f(g, 0) / 3 for g in range(3)])
LOG_LIKELIHOOD = sum(math.log(sum(f(g, a) * f(g, b) / 3 for g in range(3))) for a, b in ((0, 0), (1, 2), (2, 0)))


def responsibility(g, a):
    """R[o, g]: the answer attended, given v = g: (L/2) / (L/2 + 1/6)."""
    return (L[g][a] / 2) / f(g, a)


def attended(posterior, a):
    return sum(posterior[g] * responsibility(g, a) for g in range(3))


# M-step: attended_o = Σ_g T R. w1: i1 ≈ 0.5753, i2 ≈ 0.4614, i3 ≈ 0.4409; w2: i1 ≈ 0.5753, i2 ≈ 0.5136,
# i3 ≈ 0.4409. θ = (Σ attended + 1) / (3 + 2): w1 ≈ 0.4955, w2 ≈ 0.5060.
ATTENDED = {
    "w1": [attended(T1, 0), attended(T2, 1), attended(T3, 2)],
    "w2": [attended(T1, 0), attended(T2, 2), attended(T3, 0)],
}
THETA = [(sum(ATTENDED[w]) + 1) / 5 for w in ("w1", "w2")]
# ξ_w1(a) ∝ (1 - attended of its answer a) + 10; ξ_w2: label 1 has two answers (i1, i3), label 2 none.
XI_W1 = normalised([1 - ATTENDED["w1"][0] + 10, 1 - ATTENDED["w1"][1] + 10, 1 - ATTENDED["w1"][2] + 10])
XI_W2 = normalised([2 - ATTENDED["w2"][0] - ATTENDED["w2"][2] + 10, 10, 1 - ATTENDED["w2"][1] + 10])
PRIORS = [(T1[g] + T2[g] + T3[g] + 1) / (3 + 3) for g in range(3)]


def start_params():
    return OrdinalSpammerParameters(
        priors=np.full(3, 1 / 3), competence=np.full(2, 0.5), strategy=np.full((2, 3), 1 / 3), spread=1.0
    )


def test_careful_likelihood_is_the_discretised_normal():
    assert np.allclose(careful_likelihood(value_grid(3, 1.0), 3, 1.0), L, atol=1e-12)
    assert np.allclose(value_grid(5, 0.25), np.arange(17) / 4)


def test_one_e_step_and_m_step_match_the_hand_computation():
    coded = code_answers(ANSWERS, labels=[1, 2, 3])
    grid = value_grid(3, 1.0)
    posteriors, responsibilities, log_likelihood = e_step(coded, grid, start_params())
    assert np.allclose(posteriors, [T1, T2, T3], atol=1e-12)
    labels = [0, 0, 1, 2, 2, 0]  # the answers' label positions in ANSWERS order
    assert np.allclose(responsibilities, [[responsibility(g, a) for g in range(3)] for a in labels], atol=1e-12)
    assert log_likelihood == pytest.approx(LOG_LIKELIHOOD, abs=1e-12)
    params = m_step(coded, grid, start_params(), posteriors, responsibilities, smoothing=1.0, strategy_smoothing=10.0)
    assert np.allclose(params.competence, THETA, atol=1e-12)
    assert np.allclose(params.strategy, [XI_W1, XI_W2], atol=1e-12)
    assert np.allclose(params.priors, PRIORS, atol=1e-12)


def test_the_spread_maximises_the_attended_answers_likelihood():
    """σ against a plain scan (0.3-5) of Σ W[g, a] log L_σ[g, a], L from math.erfc, W from the hand-computed step."""
    coded = code_answers(ANSWERS, labels=[1, 2, 3])
    grid = value_grid(3, 1.0)
    posteriors, responsibilities, _ = e_step(coded, grid, start_params())
    params = m_step(coded, grid, start_params(), posteriors, responsibilities, smoothing=1.0, strategy_smoothing=10.0)
    answered = [(T1, 0), (T1, 0), (T2, 1), (T2, 2), (T3, 2), (T3, 0)]

    def objective(sigma):
        def cell(g, a):
            upper = 1.0 if a == 2 else phi((a + 0.5 - g) / sigma)
            lower = 0.0 if a == 0 else phi((a - 0.5 - g) / sigma)
            return upper - lower

        return sum(t[g] * responsibility(g, a) * math.log(cell(g, a)) for t, a in answered for g in range(3))

    scan = max((objective(s / 1000), s / 1000) for s in range(300, 5001))
    assert params.spread == pytest.approx(scan[1], abs=2e-3)
    assert objective(params.spread) >= scan[0] - 1e-9


def small_crowd(rng, *, items=30, careful=6):
    """Careful raters: the item's value plus Normal(0, 0.6), rounded and clipped to 1-5; "random" answers
    uniformly; "liner" gives 4 to everything. Every rater rates every item."""
    quality = rng.uniform(1, 5, items)
    answers = []
    for k, q in enumerate(quality):
        for j in range(careful):
            answers.append((f"c{j}", f"i{k}", int(np.clip(np.rint(q + rng.normal(0, 0.6)), 1, 5))))
        answers.append(("random", f"i{k}", int(rng.integers(1, 6))))
        answers.append(("liner", f"i{k}", 4))
    return answers


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_rater_answering_at_random_gets_lower_competence_than_careful_raters(seed):
    fitted = ordinal_spammer(small_crowd(np.random.default_rng(seed)), labels=[1, 2, 3, 4, 5])
    careful = [fitted.competence[f"c{j}"] for j in range(6)]
    assert fitted.competence["random"] < min(careful)
    assert fitted.competence["liner"] < min(careful)
    assert max(fitted.strategy["liner"], key=fitted.strategy["liner"].get) == 4  # read as their own taste
    assert 0.3 < fitted.spread < 1.0  # careful answers spread 0.6 before rounding


def test_the_fit_is_deterministic_and_reports_item_values_on_the_scale():
    answers = small_crowd(np.random.default_rng(4))
    first, second = ordinal_spammer(answers, labels=[1, 2, 3, 4, 5]), ordinal_spammer(answers, labels=[1, 2, 3, 4, 5])
    assert first.competence == second.competence
    assert all(1 <= v <= 5 for v in first.item_values.values())


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        ordinal_spammer(ANSWERS, labels=[1, 2, 3], smoothing=0)
    with pytest.raises(ValueError):
        ordinal_spammer(ANSWERS, labels=[1, 2, 3], start_competence=1.0)
    with pytest.raises(ValueError):
        ordinal_spammer(ANSWERS, labels=[1, 2, 3], grid_step=0)
    with pytest.raises(ValueError):
        ordinal_spammer(ANSWERS, labels=[1, 2, 3], strategy_smoothing=0)
