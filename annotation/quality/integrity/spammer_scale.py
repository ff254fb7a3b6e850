"""A spammer model on a rating scale: MACE's knows-or-spams split with one confusion matrix shared by all
careful raters (issue 40, the competence rank correlation).

Dawid-Skene gives every worker a full K × K confusion matrix: 20 free numbers on a 1-5 scale from the
40-50 answers a crowd worker gives, so the competence read from it is noisy. MACE has one number per
worker (θ_j) but assumes a careful worker gives exactly the true label, which on a 1-5 scale is false (a
careful rater gives a 4 for a true 5). This model keeps MACE's one competence per worker and lets careful
answers miss by the crowd's own confusion C (shared, so it is learned from every answer):
  P(A_ij = a | T_i = t) = θ_j · C[t, a] + (1 - θ_j) · ξ_j(a)
with ξ_j the worker's spamming distribution (a straight-liner's favourite answer). θ_j is the share of a
worker's answers that follow the item.

EM, each parameter with a symmetric pseudo-count `smoothing` (Laplace: 1 by default; it keeps θ away from
0 and 1 for a worker of few answers, and every answer possible):
  start   T[i, t] = the vote shares (as Dawid-Skene); θ_j = `start_competence`; ξ_j uniform; C from the
          vote shares: C[t, a] ∝ Σ_{answers a to item i} T[i, t] + smoothing.
  E-step  for each answer o (worker j, item i, label a) and class t, the responsibility that it was careful
          R[o, t] = θ_j C[t, a] / (θ_j C[t, a] + (1 - θ_j) ξ_j(a));
          T[i, t] ∝ p_t Π_{o on i} (θ_j C[t, a_o] + (1 - θ_j) ξ_j(a_o)).
  M-step  careful_o = Σ_t T[i, t] R[o, t]
          θ_j = (Σ_{o of j} careful_o + s) / (n_j + 2s)
          C[t, a] ∝ Σ_{o with label a} T[i, t] R[o, t] + s
          ξ_j(a) ∝ Σ_{o of j with label a} (1 - careful_o) + s
          p_t = (Σ_i T[i, t] + s) / (items + K s)
One E-step and M-step alternate from the start for `iterations` rounds or until the log-likelihood gains
less than `tolerance` of itself. The model is a modelling choice, not a finding: it is tested on the bench's
simulated crowd (whose careless answers are uniform), and its competence is a share of answers, as MACE's.
"""

from dataclasses import dataclass, field

import numpy as np

from annotation.quality.integrity.coding import code_answers
from annotation.quality.integrity.dawid_skene import vote_shares


@dataclass(frozen=True)
class SpammerScaleResult:
    competence: dict  # worker -> θ (the share of their answers that follow the item)
    strategy: dict  # worker -> {label: ξ(label)}
    shared_confusion: dict  # true label -> {answer: C[t, a]}
    posteriors: dict  # item -> {label: P(true class)}
    log_likelihood: float
    iterations: int
    history: list = field(default_factory=list)


def answer_likelihood(coded, competence, confusion, strategy):
    """Per answer and class t: θ_j C[t, a] (careful) and (1 - θ_j) ξ_j(a) (spam), answers × classes."""
    theta = competence[coded.worker][:, None]
    careful = theta * confusion[:, coded.label].T
    spam = (1 - theta) * strategy[coded.worker, coded.label][:, None]
    return careful, np.broadcast_to(spam, careful.shape)


def e_step(coded, priors, competence, confusion, strategy):
    """Posteriors T (items × classes), responsibilities R (answers × classes) and the log-likelihood."""
    careful, spam = answer_likelihood(coded, competence, confusion, strategy)
    total = careful + spam
    log_weights = np.tile(np.log(priors), (coded.n_items, 1))
    np.add.at(log_weights, coded.item, np.log(total))
    top = log_weights.max(axis=1)
    log_likelihood = float(np.sum(top + np.log(np.exp(log_weights - top[:, None]).sum(axis=1))))
    weights = np.exp(log_weights - top[:, None])
    return weights / weights.sum(axis=1, keepdims=True), careful / total, log_likelihood


def m_step(coded, posteriors, responsibilities, *, smoothing):
    """Priors, θ, shared C and ξ from the current posteriors and responsibilities."""
    n_labels, s = coded.n_labels, smoothing
    weighted = posteriors[coded.item] * responsibilities  # answers × classes: careful and of class t
    careful = weighted.sum(axis=1)
    answers = np.bincount(coded.worker, minlength=coded.n_workers)
    competence = (np.bincount(coded.worker, careful, coded.n_workers) + s) / (answers + 2 * s)
    confusion = np.zeros((n_labels, n_labels))
    np.add.at(confusion, (slice(None), coded.label), weighted.T)
    confusion = (confusion + s) / (confusion + s).sum(axis=1, keepdims=True)
    strategy = np.zeros((coded.n_workers, n_labels))
    np.add.at(strategy, (coded.worker, coded.label), 1 - careful)
    strategy = (strategy + s) / (strategy + s).sum(axis=1, keepdims=True)
    priors = (posteriors.sum(axis=0) + s) / (coded.n_items + n_labels * s)
    return priors, competence, confusion, strategy


def start(coded, *, smoothing, start_competence):
    posteriors = vote_shares(coded)
    confusion = np.zeros((coded.n_labels, coded.n_labels))
    np.add.at(confusion, (slice(None), coded.label), posteriors[coded.item].T)
    confusion = (confusion + smoothing) / (confusion + smoothing).sum(axis=1, keepdims=True)
    priors = (posteriors.sum(axis=0) + smoothing) / (coded.n_items + coded.n_labels * smoothing)
    competence = np.full(coded.n_workers, float(start_competence))
    strategy = np.full((coded.n_workers, coded.n_labels), 1.0 / coded.n_labels)
    return priors, competence, confusion, strategy


def spammer_scale(answers, *, labels=None, iterations=200, tolerance=1e-9, smoothing=1.0, start_competence=0.7):
    """Fit the model to `(worker, item, label)` answers (a worker answering an item twice is refused)."""
    if smoothing <= 0:
        raise ValueError("smoothing must be > 0 (it keeps every answer possible)")
    if not 0 < start_competence < 1:
        raise ValueError("start_competence must be in (0, 1)")
    coded = code_answers(answers, labels=labels)
    params = start(coded, smoothing=smoothing, start_competence=start_competence)
    history = []
    for _ in range(max(1, iterations)):
        posteriors, responsibilities, score = e_step(coded, *params)
        history.append(score)
        params = m_step(coded, posteriors, responsibilities, smoothing=smoothing)
        if len(history) > 1 and abs(history[-1] - history[-2]) < tolerance * abs(history[-1]):
            break
    _priors, competence, confusion, strategy = params
    posteriors, _, score = e_step(coded, *params)
    labels_ = coded.labels
    return SpammerScaleResult(
        competence={w: float(competence[j]) for j, w in enumerate(coded.workers)},
        strategy={w: dict(zip(labels_, map(float, strategy[j]), strict=True)) for j, w in enumerate(coded.workers)},
        shared_confusion={t: dict(zip(labels_, map(float, confusion[k]), strict=True)) for k, t in enumerate(labels_)},
        posteriors={it: dict(zip(labels_, map(float, posteriors[k]), strict=True)) for k, it in enumerate(coded.items)},
        log_likelihood=score,
        iterations=len(history),
        history=history,
    )


def pooled_competence(estimates):
    """One competence per worker from several models' estimates of the same quantity (the share of answers
    that follow the item), each weighted by how many answers it rests on:
    `estimates`: [({worker: competence}, {worker: answers})]. A worker is pooled over the estimates that
    know them. Valid only where the estimates measure the same thing (MACE's θ and this model's θ do)."""
    sums, counts = {}, {}
    for competence, answers in estimates:
        for worker, value in competence.items():
            n = answers.get(worker, 0)
            sums[worker] = sums.get(worker, 0.0) + n * value
            counts[worker] = counts.get(worker, 0) + n
    return {w: sums[w] / counts[w] for w in sums if counts[w] > 0}
