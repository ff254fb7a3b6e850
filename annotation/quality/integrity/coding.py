"""Answers `(worker, item, label)` as index arrays, the shape the reliability models compute on.

Workers, items and labels keep their order of first appearance (labels: the order given, when given),
so results map back to the caller's ids without sorting ids that may not be comparable.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CodedAnswers:
    workers: list
    items: list
    labels: list
    worker: np.ndarray  # per answer: index into `workers`
    item: np.ndarray  # per answer: index into `items`
    label: np.ndarray  # per answer: index into `labels`

    @property
    def n_workers(self):
        return len(self.workers)

    @property
    def n_items(self):
        return len(self.items)

    @property
    def n_labels(self):
        return len(self.labels)


def _index_of(values):
    index = {}
    for value in values:
        index.setdefault(value, len(index))
    return index


def code_answers(answers, *, labels=None):
    """`answers`: iterable of `(worker, item, label)`. A worker answering one item twice is refused:
    the models count each answer as independent evidence, so a duplicate would count twice."""
    answers = list(answers)
    if not answers:
        raise ValueError("no answers to model")
    worker_index = _index_of(w for w, _, _ in answers)
    item_index = _index_of(i for _, i, _ in answers)
    if labels is None:
        label_index = _index_of(a for _, _, a in answers)
    else:
        label_index = _index_of(labels)
        unknown = {a for _, _, a in answers} - set(label_index)
        if unknown:
            raise ValueError(f"answers {sorted(map(repr, unknown))} are not among the labels {list(labels)}")
    seen = set()
    for worker, item, _ in answers:
        if (worker, item) in seen:
            raise ValueError(f"worker {worker!r} answered item {item!r} more than once")
        seen.add((worker, item))
    return CodedAnswers(
        workers=list(worker_index),
        items=list(item_index),
        labels=list(label_index),
        worker=np.array([worker_index[w] for w, _, _ in answers], dtype=np.intp),
        item=np.array([item_index[i] for _, i, _ in answers], dtype=np.intp),
        label=np.array([label_index[a] for _, _, a in answers], dtype=np.intp),
    )


def normalised_rows(log_weights):
    """Rows of a log-weight matrix turned into probabilities without overflow (softmax by row)."""
    shifted = log_weights - log_weights.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True)


def row_entropies(probabilities):
    """Shannon entropy (nats) of each row; 0·log 0 counts as 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probabilities > 0, probabilities * np.log(probabilities), 0.0)
    return -terms.sum(axis=1)
