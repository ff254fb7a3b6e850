"""MACE, Multi-Annotator Competence Estimation (Hovy, Berg-Kirkpatrick, Vaswani and Hovy, NAACL 2013).

The model: item i has a true label T_i drawn uniformly from the K labels. On each item a worker j either
knows (probability θ_j) and answers T_i, or spams (1 - θ_j) and answers a label drawn from their own
spamming distribution ξ_j. So P(A_ij = a | T_i = t) = θ_j·[a = t] + (1 - θ_j)·ξ_j(a). θ_j is the worker's
competence; ξ_j shows how they spam (always "A", say, for a worker who always picks the left side).

EM (method "em"):
  E-step  posterior P(T_i = t | answers) ∝ Π_j P(A_ij | t); for each answer the expected "knew it" count
          P(S_ij = 0 | answers) = P(T_i = a_ij | answers) · θ_j / (θ_j + (1 - θ_j) ξ_j(a_ij)) and the
          "spammed" count is 1 minus it (for t ≠ a_ij only spamming explains the answer).
  M-step  θ_j = knew / answers of j; ξ_j(a) = spammed answers a of j / all spammed answers of j (plus an
          optional smoothing count, as MACE's own code adds, so a label never seen stays possible).
Variational Bayes (method "vb", the paper's default): symmetric Beta(α, β) prior on θ_j (the paper's 0.5,
0.5 pushes workers towards "knows" or "spams", few "try a little") and a symmetric Dirichlet prior on
ξ_j (`strategy_prior`, 1.0 here: flat); the M-step keeps exp(E[log θ]) = exp(ψ(knew + α) - ψ(n + α + β))
(and likewise for 1 - θ and ξ) for the next E-step, and reports the posterior mean (knew + α) / (n + α + β)
as competence.
EM finds a local optimum, so it is restarted from random parameters (fixed seed) and the run with the
highest marginal log-likelihood is kept. The entropy of an item's posterior says how sure the model is:
the paper keeps the lowest-entropy items when trading coverage for accuracy (`confident_items`).
"""

from dataclasses import dataclass, field

import numpy as np

from annotation.quality.integrity.coding import code_answers, normalised_rows, row_entropies
from annotation.services.runtime.lazy_import import lazy_module

special = lazy_module("scipy.special")  # digamma, for the variational M-step only

METHODS = ("vb", "em")


@dataclass(frozen=True)
class MaceParameters:
    """What the E-step uses: weights of "knew" and "spammed" per worker, and ξ per worker (rows)."""

    know: np.ndarray
    spam: np.ndarray
    strategy: np.ndarray
    competence: np.ndarray  # reported θ: the EM estimate, or the variational posterior mean


@dataclass(frozen=True)
class MaceResult:
    competence: dict  # worker -> θ
    strategy: dict  # worker -> {label: ξ(label)}
    posteriors: dict  # item -> {label: P(true label)}
    predicted: dict  # item -> most probable label
    entropy: dict  # item -> entropy (nats) of its posterior
    log_likelihood: float
    restarts: list = field(default_factory=list)  # the log-likelihood each restart reached

    def confident_items(self, fraction):
        """The `fraction` of items whose posteriors have the lowest entropy (MACE's coverage threshold)."""
        if not 0 < fraction <= 1:
            raise ValueError("fraction must be in (0, 1]")
        ranked = sorted(self.entropy, key=self.entropy.__getitem__)
        return ranked[: max(1, round(fraction * len(ranked)))]


def e_step(coded, parameters):
    """Posteriors over the true label (items × labels) and the expected "knew it" count per answer."""
    w, i, a = coded.worker, coded.item, coded.label
    n_labels = coded.n_labels
    spam_part = parameters.spam[w] * parameters.strategy[w, a]  # per answer
    know_part = parameters.know[w]
    # Likelihood of each answer under each candidate true label: the spam part always, the know part
    # only under the label that was given.
    likelihood = np.repeat(spam_part[:, None], n_labels, axis=1)
    likelihood[np.arange(len(a)), a] += know_part
    log_weights = np.zeros((coded.n_items, n_labels))
    np.add.at(log_weights, i, np.log(likelihood))
    posteriors = normalised_rows(log_weights)
    knew = posteriors[i, a] * know_part / (know_part + spam_part)
    return posteriors, knew


def m_step(coded, knew, *, method="vb", smoothing=0.01, alpha=0.5, beta=0.5, strategy_prior=1.0):
    """New parameters from the expected counts of the E-step."""
    n_workers, n_labels = coded.n_workers, coded.n_labels
    knew_total = np.bincount(coded.worker, weights=knew, minlength=n_workers)
    answers = np.bincount(coded.worker, minlength=n_workers).astype(float)
    spammed_total = answers - knew_total
    spammed_by_label = np.zeros((n_workers, n_labels))
    np.add.at(spammed_by_label, (coded.worker, coded.label), 1.0 - knew)
    if method == "em":
        competence = (knew_total + smoothing) / (answers + 2 * smoothing)
        strategy = (spammed_by_label + smoothing) / (spammed_total[:, None] + n_labels * smoothing)
        return MaceParameters(know=competence, spam=1.0 - competence, strategy=strategy, competence=competence)
    if method != "vb":
        raise ValueError(f"method must be one of {METHODS}")
    psi_total = special.digamma(answers + alpha + beta)
    know = np.exp(special.digamma(knew_total + alpha) - psi_total)
    spam = np.exp(special.digamma(spammed_total + beta) - psi_total)
    strategy = np.exp(
        special.digamma(spammed_by_label + strategy_prior)
        - special.digamma(spammed_total + n_labels * strategy_prior)[:, None]
    )
    competence = (knew_total + alpha) / (answers + alpha + beta)
    return MaceParameters(know=know, spam=spam, strategy=strategy, competence=competence)


def log_likelihood(coded, competence, strategy):
    """Marginal log-likelihood of all answers under point estimates θ and ξ (uniform label prior)."""
    w, a = coded.worker, coded.label
    strategy = strategy / strategy.sum(axis=1, keepdims=True)
    spam_part = (1.0 - competence[w]) * strategy[w, a]
    likelihood = np.repeat(spam_part[:, None], coded.n_labels, axis=1)
    likelihood[np.arange(len(a)), a] += competence[w]
    log_weights = np.full((coded.n_items, coded.n_labels), -np.log(coded.n_labels))
    np.add.at(log_weights, coded.item, np.log(likelihood))
    top = log_weights.max(axis=1)
    return float(np.sum(top + np.log(np.exp(log_weights - top[:, None]).sum(axis=1))))


def _random_start(rng, n_workers, n_labels):
    competence = rng.uniform(size=n_workers)
    strategy = rng.uniform(size=(n_workers, n_labels))
    strategy /= strategy.sum(axis=1, keepdims=True)
    return MaceParameters(know=competence, spam=1.0 - competence, strategy=strategy, competence=competence)


def _fit_once(coded, start, *, iterations, tolerance, m_options):
    parameters = start
    for _ in range(iterations):
        _, knew = e_step(coded, parameters)
        updated = m_step(coded, knew, **m_options)
        change = np.max(np.abs(updated.competence - parameters.competence))
        parameters = updated
        if change < tolerance:
            break
    posteriors, _ = e_step(coded, parameters)
    return parameters, posteriors


def mace(
    answers,
    *,
    labels=None,
    method="vb",
    restarts=10,
    iterations=50,
    tolerance=1e-6,
    seed=0,
    smoothing=0.01,
    alpha=0.5,
    beta=0.5,
    strategy_prior=1.0,
):
    """Fit MACE to `(worker, item, label)` answers; the best of `restarts` random starts is returned."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    if restarts < 1:
        raise ValueError("restarts must be at least 1")
    coded = code_answers(answers, labels=labels)
    m_options = {"method": method, "smoothing": smoothing, "alpha": alpha, "beta": beta,
                 "strategy_prior": strategy_prior}
    rng = np.random.default_rng(seed)
    best = None
    reached = []
    for _ in range(restarts):
        start = _random_start(rng, coded.n_workers, coded.n_labels)
        parameters, posteriors = _fit_once(coded, start, iterations=iterations, tolerance=tolerance,
                                           m_options=m_options)
        score = log_likelihood(coded, parameters.competence, parameters.strategy)
        reached.append(score)
        if best is None or score > best[0]:
            best = (score, parameters, posteriors)
    score, parameters, posteriors = best
    strategy = parameters.strategy / parameters.strategy.sum(axis=1, keepdims=True)
    entropies = row_entropies(posteriors)
    return MaceResult(
        competence={w: float(parameters.competence[k]) for k, w in enumerate(coded.workers)},
        strategy={w: dict(zip(coded.labels, map(float, strategy[k]), strict=True))
                  for k, w in enumerate(coded.workers)},
        posteriors={it: dict(zip(coded.labels, map(float, posteriors[k]), strict=True))
                    for k, it in enumerate(coded.items)},
        predicted={it: coded.labels[int(np.argmax(posteriors[k]))] for k, it in enumerate(coded.items)},
        entropy={it: float(entropies[k]) for k, it in enumerate(coded.items)},
        log_likelihood=score,
        restarts=reached,
    )
