"""Splits by context: a context's responses never sit on both sides of a split."""

import numpy as np


def _shuffled_contexts(context_ids, seed):
    unique = sorted(set(context_ids))
    order = np.random.default_rng(seed).permutation(len(unique))
    return [unique[i] for i in order]


def _indices(context_ids, chosen):
    chosen = set(chosen)
    return np.array([i for i, c in enumerate(context_ids) if c in chosen], dtype=np.int64)


def split_by_context(context_ids, *, seed=0, fractions=(0.7, 0.15, 0.15)):
    """(train, validation, test) example indices, 70/15/15 of the contexts by default."""
    if len(fractions) != 3 or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError("fractions must be three numbers summing to 1")
    contexts = _shuffled_contexts(context_ids, seed)
    n = len(contexts)
    n_val = max(1, round(n * fractions[1]))
    n_test = max(1, round(n * fractions[2]))
    n_train = n - n_val - n_test
    if n_train < 1:
        raise ValueError(f"{n} contexts are too few to split into train, validation and test")
    return (
        _indices(context_ids, contexts[:n_train]),
        _indices(context_ids, contexts[n_train : n_train + n_val]),
        _indices(context_ids, contexts[n_train + n_val :]),
    )


def _context_folds(context_ids, k, seed):
    """(the other folds' contexts, this fold's contexts) for each of k folds of shuffled contexts."""
    contexts = _shuffled_contexts(context_ids, seed)
    if k < 2 or k > len(contexts):
        raise ValueError(f"k must be between 2 and the number of contexts ({len(contexts)}), not {k}")
    folds = [contexts[i::k] for i in range(k)]
    return [([c for j, fold in enumerate(folds) if j != i for c in fold], test) for i, test in enumerate(folds)]


def folds_by_context(context_ids, *, k, seed=0):
    """k (train, test) index pairs by context, no validation slice: for a cross-validation inside
    the rows one fit was handed (the stacked kind's choice of penalty)."""
    return [
        (_indices(context_ids, rest), _indices(context_ids, test))
        for rest, test in _context_folds(context_ids, k, seed)
    ]


def kfold_by_context(context_ids, *, k, seed=0, validation_fraction=0.15):
    """k (train, validation, test) index triples; every example is in exactly one test fold.

    The validation contexts (for early stopping) come out of each fold's training contexts.
    """
    out = []
    for rest, test in _context_folds(context_ids, k, seed):
        n_val = max(1, round(len(rest) * validation_fraction))
        out.append(
            (
                _indices(context_ids, rest[n_val:]),
                _indices(context_ids, rest[:n_val]),
                _indices(context_ids, test),
            )
        )
    return out
