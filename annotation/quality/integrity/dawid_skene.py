"""Dawid and Skene (1979): class priors and one confusion matrix per worker, fitted by EM.

Used for the 1-5 rating scale treated as categories (the model knows no order: a 4 for a true 5 is as
wrong as a 1). Worker j's confusion matrix π_j[k, l] is the probability that j answers l when the true
class is k; p_k is the share of items whose true class is k.
  start   T[i, k] = share of item i's answers that are k: the majority vote, kept soft so that a tie is a
          tie (Dawid and Skene start from the answers' proportions in the same way).
  M-step  p_k = Σ_i T[i, k] / items; π_j[k, l] = Σ_{i: j answered l} T[i, k] / Σ_{i: j answered} T[i, k]
          (plus an optional smoothing count, so a class a worker never met stays possible instead of
          vetoing every item by a log of zero).
  E-step  T[i, k] ∝ p_k Π_{j answered i} π_j[k, a_ij].
A worker's competence is their expected accuracy Σ_k p_k π_j[k, k]; for numeric labels the expected
distance between their answer and the true class, Σ_k p_k Σ_l π_j[k, l] |k - l|, is reported beside it
because on an ordinal scale a near miss is not a random answer.
"""

from dataclasses import dataclass, field
from numbers import Real

import numpy as np

from annotation.quality.integrity.coding import code_answers, normalised_rows, row_entropies


@dataclass(frozen=True)
class DawidSkeneResult:
    competence: dict  # worker -> expected accuracy
    expected_distance: dict  # worker -> expected |answer - true class| (numeric labels only, else empty)
    confusion: dict  # worker -> {true label: {answer: probability}}
    priors: dict  # label -> p
    posteriors: dict  # item -> {label: P(true class)}
    predicted: dict  # item -> most probable class
    entropy: dict  # item -> entropy (nats) of its posterior
    log_likelihood: float
    iterations: int
    history: list = field(default_factory=list)  # log-likelihood after each E-step


def vote_shares(coded):
    """Initial T: each item's answers as proportions over the labels."""
    counts = np.zeros((coded.n_items, coded.n_labels))
    np.add.at(counts, (coded.item, coded.label), 1.0)
    return counts / counts.sum(axis=1, keepdims=True)


def m_step(coded, posteriors, *, smoothing=0.01):
    """Class priors and confusion matrices (workers × true × answered) from the current T."""
    n_labels = coded.n_labels
    priors = (posteriors.sum(axis=0) + smoothing) / (coded.n_items + n_labels * smoothing)
    counts = np.zeros((coded.n_workers, n_labels, n_labels))
    # Answer o adds its item's whole posterior row to column a_o of its worker's matrix.
    np.add.at(counts, (coded.worker, slice(None), coded.label), posteriors[coded.item])
    counts += smoothing
    totals = counts.sum(axis=2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        confusion = np.where(totals > 0, counts / totals, 1.0 / n_labels)
    return priors, confusion


def e_step(coded, priors, confusion):
    """Posteriors T (items × classes) and the marginal log-likelihood of all answers."""
    with np.errstate(divide="ignore"):
        log_weights = np.tile(np.log(priors), (coded.n_items, 1))
        np.add.at(log_weights, coded.item, np.log(confusion[coded.worker, :, coded.label]))
    top = log_weights.max(axis=1)
    if not np.all(np.isfinite(top)):
        raise ValueError("an item is impossible under every class; fit with smoothing > 0")
    log_likelihood = float(np.sum(top + np.log(np.exp(log_weights - top[:, None]).sum(axis=1))))
    return normalised_rows(log_weights), log_likelihood


def dawid_skene(answers, *, labels=None, iterations=100, tolerance=1e-8, smoothing=0.01):
    """Fit Dawid-Skene to `(worker, item, label)` answers, EM started from the vote shares; stops when the
    log-likelihood gains less than `tolerance` of itself in one step, or after `iterations` steps."""
    coded = code_answers(answers, labels=labels)
    posteriors = vote_shares(coded)
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    history = []
    for _ in range(iterations):
        priors, confusion = m_step(coded, posteriors, smoothing=smoothing)
        posteriors, score = e_step(coded, priors, confusion)
        history.append(score)
        if len(history) > 1 and abs(history[-1] - history[-2]) < tolerance * abs(history[-1]):
            break
    accuracy = np.einsum("k,jkk->j", priors, confusion)
    numeric = all(isinstance(v, Real) and not isinstance(v, bool) for v in coded.labels)
    distances = {}
    if numeric:
        values = np.array(coded.labels, dtype=float)
        gap = np.abs(values[:, None] - values[None, :])
        expected = np.einsum("k,jkl,kl->j", priors, confusion, gap)
        distances = {w: float(expected[j]) for j, w in enumerate(coded.workers)}
    entropies = row_entropies(posteriors)
    return DawidSkeneResult(
        competence={w: float(accuracy[j]) for j, w in enumerate(coded.workers)},
        expected_distance=distances,
        confusion={
            w: {t: dict(zip(coded.labels, map(float, confusion[j, k]), strict=True))
                for k, t in enumerate(coded.labels)}
            for j, w in enumerate(coded.workers)
        },
        priors=dict(zip(coded.labels, map(float, priors), strict=True)),
        posteriors={it: dict(zip(coded.labels, map(float, posteriors[k]), strict=True))
                    for k, it in enumerate(coded.items)},
        predicted={it: coded.labels[int(np.argmax(posteriors[k]))] for k, it in enumerate(coded.items)},
        entropy={it: float(entropies[k]) for k, it in enumerate(coded.items)},
        log_likelihood=history[-1],
        iterations=len(history),
        history=history,
    )
