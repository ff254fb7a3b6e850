"""An ordinal spammer model: MACE's attends-or-spams split (Hovy et al., NAACL 2013) on a rating scale whose
careful answers fall near each item's latent value (issue 40, the competence rank correlation).

MACE and Dawid-Skene (Passonneau and Carpenter, TACL 2014, fit it to ordinal word-sense ratings) treat the
labels 1-5 as categories: a 4 for an item whose true class is 5 is as wrong as a 1. On a rating scale a
careful rater misses by a little, and an answer that ignores the item lands anywhere. This model keeps
MACE's one competence per worker and reads every answer's distance from the item:
  item i has a latent value v_i on a grid over the scale (label positions 0 .. K-1, `grid_step` apart),
  with prior π over the grid;
  worker j attends with probability θ_j and then answers the label whose interval holds v_i + e,
  e ~ Normal(0, σ²), σ one for the crowd (an ordered probit: the first and last labels take the tails);
  otherwise they answer from their own spamming distribution ξ_j (a straight-liner's favourite label):
  P(A_ij = a | v_i = g) = θ_j L_σ[g, a] + (1 - θ_j) ξ_j(a),  L_σ[g, a] = Φ((a + ½ - g)/σ) - Φ((a - ½ - g)/σ).
θ_j is the share of the worker's answers that follow the item, as MACE's θ.

EM, with symmetric pseudo-counts: `smoothing` s on θ and π (Laplace; keeps θ off 0 and 1 for a worker of
few answers) and `strategy_smoothing` s_ξ on each ξ_j, a Dirichlet prior towards uniform as MACE puts on ξ.
s_ξ is 10 per label by default: a worker's 50 answers cannot pin ξ_j's four free numbers, and a loose ξ_j
lets a careful worker's ordinary answers pass as "spam" by their own taste; 10 per label leaves a
straight-liner's favourite clear (40 answers of one label outweigh 10) and holds careful workers' ξ near
uniform. (Chosen on the bench's seeds 0-4 among 1, 3, 10 and ∞; reported on others.)
  start   π uniform, θ_j = `start_competence`, ξ_j uniform, σ = `start_spread`.
  E-step  for each answer o (worker j, item i, label a) and grid value g:
          R[o, g] = θ_j L[g, a] / (θ_j L[g, a] + (1 - θ_j) ξ_j(a))   (the answer attended, given v_i = g);
          T[i, g] ∝ π_g Π_{o on i} (θ_j L[g, a_o] + (1 - θ_j) ξ_j(a_o)).
  M-step  attended_o = Σ_g T[i, g] R[o, g]
          θ_j = (Σ_{o of j} attended_o + s) / (n_j + 2s)
          ξ_j(a) ∝ Σ_{o of j with label a} (1 - attended_o) + s_ξ
          π_g ∝ Σ_i T[i, g] + s
          σ maximises Σ_o Σ_g T[i, g] R[o, g] log L_σ[g, a_o] (one-dimensional, bounded search).
The model is a modelling choice, not a finding. Its assumptions: the labels are ordered and evenly spaced;
careful raters share one spread and no personal leniency (a rater who is careful but one point harsh
loses competence here; per-worker z-scores first, or Dawid-Skene, would suit such a crowd better); an
answer is careful or not independently of the others. Its θ is an estimate to flag workers for a look,
not a verdict on them.
"""

from dataclasses import dataclass, field

import numpy as np

from annotation.quality.integrity.coding import code_answers, normalised_rows
from annotation.services.runtime.lazy_import import lazy_module

special = lazy_module("scipy.special")  # ndtr, the normal distribution function
optimize = lazy_module("scipy.optimize")  # the bounded one-dimensional search for σ

SPREAD_BOUNDS = (0.05, 10.0)  # σ in label steps: from near-exact answers to near-uniform ones


@dataclass(frozen=True)
class OrdinalSpammerParameters:
    priors: np.ndarray  # π over the grid
    competence: np.ndarray  # θ per worker
    strategy: np.ndarray  # ξ per worker (rows) over the labels
    spread: float  # σ, in label steps


@dataclass(frozen=True)
class OrdinalSpammerResult:
    competence: dict  # worker -> θ (the share of their answers that follow the item)
    strategy: dict  # worker -> {label: ξ(label)}
    spread: float  # σ of careful answers, in label steps
    item_values: dict  # item -> posterior mean of its latent value, on the labels' scale when numeric
    log_likelihood: float
    iterations: int
    history: list = field(default_factory=list)


def value_grid(n_labels, grid_step):
    """Latent values from the first label's position (0) to the last's (K - 1), `grid_step` apart."""
    steps = round((n_labels - 1) / grid_step)
    return np.linspace(0.0, n_labels - 1, steps + 1)


def careful_likelihood(grid, n_labels, spread):
    """L[g, a]: the probability that a careful answer to an item of latent value g is label a."""
    edges = np.arange(n_labels + 1) - 0.5
    edges[0], edges[-1] = -np.inf, np.inf
    below = special.ndtr((edges[None, :] - grid[:, None]) / spread)
    return np.diff(below, axis=1)


def e_step(coded, grid, params):
    """Posteriors T (items × grid), responsibilities R (answers × grid) and the log-likelihood."""
    theta = params.competence[coded.worker][:, None]
    careful = theta * careful_likelihood(grid, coded.n_labels, params.spread)[:, coded.label].T
    spam = (1 - theta) * params.strategy[coded.worker, coded.label][:, None]
    total = careful + spam
    log_weights = np.tile(np.log(params.priors), (coded.n_items, 1))
    np.add.at(log_weights, coded.item, np.log(total))
    top = log_weights.max(axis=1)
    log_likelihood = float(np.sum(top + np.log(np.exp(log_weights - top[:, None]).sum(axis=1))))
    return normalised_rows(log_weights), careful / total, log_likelihood


def best_spread(grid, n_labels, attended_by_label, start):
    """σ maximising Σ_{g, a} W[g, a] log L_σ[g, a], W the attended answers' weight per grid value and label."""

    def loss(spread):
        likelihood = careful_likelihood(grid, n_labels, spread)
        return -float(np.sum(attended_by_label * np.log(np.maximum(likelihood, 1e-300))))

    found = optimize.minimize_scalar(loss, bounds=SPREAD_BOUNDS, method="bounded", options={"xatol": 1e-6})
    return float(found.x) if found.fun <= loss(start) else float(start)


def m_step(coded, grid, params, posteriors, responsibilities, *, smoothing, strategy_smoothing):
    """Priors, θ, ξ and σ from the current posteriors and responsibilities."""
    s = smoothing
    if strategy_smoothing <= 0:
        raise ValueError("strategy_smoothing must be > 0")
    weighted = posteriors[coded.item] * responsibilities  # answers × grid: attended, with v_i = g
    attended = weighted.sum(axis=1)
    answers = np.bincount(coded.worker, minlength=coded.n_workers)
    competence = (np.bincount(coded.worker, attended, coded.n_workers) + s) / (answers + 2 * s)
    strategy = np.zeros((coded.n_workers, coded.n_labels))
    np.add.at(strategy, (coded.worker, coded.label), 1 - attended)
    strategy = (strategy + strategy_smoothing) / (strategy + strategy_smoothing).sum(axis=1, keepdims=True)
    priors = (posteriors.sum(axis=0) + s) / (coded.n_items + len(grid) * s)
    by_label = np.zeros((len(grid), coded.n_labels))
    np.add.at(by_label, (slice(None), coded.label), weighted.T)
    spread = best_spread(grid, coded.n_labels, by_label, params.spread)
    return OrdinalSpammerParameters(priors, competence, strategy, spread)


def start(coded, grid, *, start_competence, start_spread):
    return OrdinalSpammerParameters(
        priors=np.full(len(grid), 1.0 / len(grid)),
        competence=np.full(coded.n_workers, float(start_competence)),
        strategy=np.full((coded.n_workers, coded.n_labels), 1.0 / coded.n_labels),
        spread=float(start_spread),
    )


def _label_values(labels):
    """The labels' own numbers when they are evenly spaced numbers (1-5), else their positions."""
    try:
        values = np.array([float(label) for label in labels])
    except (TypeError, ValueError):
        return np.arange(len(labels), dtype=float)
    steps = np.diff(values)
    if len(values) > 1 and np.allclose(steps, steps[0]) and steps[0] > 0:
        return values
    return np.arange(len(labels), dtype=float)


def ordinal_spammer(
    answers,
    *,
    labels,
    grid_step=0.25,
    iterations=200,
    tolerance=1e-9,
    smoothing=1.0,
    start_competence=0.7,
    start_spread=1.0,
    strategy_smoothing=10.0,
):
    """Fit the model to `(worker, item, label)` answers; `labels` in scale order (lowest first)."""
    if smoothing <= 0:
        raise ValueError("smoothing must be > 0 (it keeps every answer possible)")
    if not 0 < start_competence < 1:
        raise ValueError("start_competence must be in (0, 1)")
    if not 0 < grid_step <= 1:
        raise ValueError("grid_step must be in (0, 1] label steps")
    if len(labels) < 2:
        raise ValueError("an ordinal scale needs at least two labels")
    coded = code_answers(answers, labels=labels)
    grid = value_grid(coded.n_labels, grid_step)
    params = start(coded, grid, start_competence=start_competence, start_spread=start_spread)
    history = []
    for _ in range(max(1, iterations)):
        posteriors, responsibilities, score = e_step(coded, grid, params)
        history.append(score)
        params = m_step(
            coded,
            grid,
            params,
            posteriors,
            responsibilities,
            smoothing=smoothing,
            strategy_smoothing=strategy_smoothing,
        )
        if len(history) > 1 and abs(history[-1] - history[-2]) < tolerance * abs(history[-1]):
            break
    posteriors, _, score = e_step(coded, grid, params)
    values = _label_values(coded.labels)
    step = values[1] - values[0]
    item_values = values[0] + step * (posteriors @ grid)
    return OrdinalSpammerResult(
        competence={w: float(params.competence[j]) for j, w in enumerate(coded.workers)},
        strategy={
            w: dict(zip(coded.labels, map(float, params.strategy[j]), strict=True)) for j, w in enumerate(coded.workers)
        },
        spread=params.spread,
        item_values={it: float(item_values[k]) for k, it in enumerate(coded.items)},
        log_likelihood=score,
        iterations=len(history),
        history=history,
    )
