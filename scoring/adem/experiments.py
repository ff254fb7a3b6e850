"""The paper's experiments: leave-one-system-out (Table 4) and data efficiency (supplement Table 6).

Both pool out-of-fold predictions over k folds by context, so every number is computed on
responses whose contexts the model never saw, and small datasets still give stable figures.
"""

import numpy as np

from scoring.adem.choices import KINDS  # noqa: F401  defined in choices.py (no torch); imported from here too
from scoring.adem.evaluate import correlations
from scoring.adem.pipeline import Vectors, fit_scorer
from scoring.adem.splits import kfold_by_context

FRACTIONS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0)


def run(kind, examples, vectors, config, *, seed, folds, encoder):
    if config.scale is None:
        scores = [e.score for e in examples]
        config.scale = (float(np.floor(min(scores))), float(np.ceil(max(scores))))
    if kind == "leave-one-system-out":
        return leave_one_system_out(examples, vectors, config, seed=seed, folds=folds, encoder=encoder)
    if kind == "data-efficiency":
        return data_efficiency(examples, vectors, config, seed=seed, folds=folds, encoder=encoder)
    raise ValueError(f"unknown experiment {kind!r}")


def _pooled(examples, vectors, config, *, seed, folds, encoder, keep_train, fraction=1.0):
    """Out-of-fold predictions for every example; `keep_train(i)` filters each fold's training set."""
    context_ids = [e.context_id for e in examples]
    predicted = np.full(len(examples), np.nan, dtype=np.float64)
    rng = np.random.default_rng(seed)
    for k, (fold_train, val_idx, test_idx) in enumerate(kfold_by_context(context_ids, k=folds, seed=seed)):
        train_idx = np.array([i for i in fold_train if keep_train(i)], dtype=np.int64)
        if fraction < 1.0:
            # Subsample whole contexts, so the smaller training sets stay split by context.
            contexts = sorted({context_ids[i] for i in train_idx})
            n = max(2, round(len(contexts) * fraction))
            chosen = set(rng.choice(contexts, size=min(n, len(contexts)), replace=False).tolist())
            train_idx = np.array([i for i in train_idx if context_ids[i] in chosen], dtype=np.int64)
        scorer, _ = fit_scorer(examples, vectors, train_idx, val_idx, config, seed=seed + k, encoder=encoder)
        predicted[test_idx] = scorer.score_vectors(Vectors(*vectors.take(test_idx)))
    return predicted


def leave_one_system_out(examples, vectors, config, *, seed, folds, encoder):
    """Per system: test on its responses with models trained with and without that system."""
    human = np.array([e.score for e in examples])
    systems = sorted({e.system for e in examples})
    with_all = _pooled(examples, vectors, config, seed=seed, folds=folds, encoder=encoder, keep_train=lambda i: True)
    rows = []
    for system in systems:
        mine = np.array([e.system == system for e in examples])
        without = _pooled(
            examples,
            vectors,
            config,
            seed=seed,
            folds=folds,
            encoder=encoder,
            keep_train=lambda i, s=system: examples[i].system != s,
        )
        rows.append(
            {
                "system": system,
                "trained_with": correlations(with_all[mine], human[mine]),
                "trained_without": correlations(without[mine], human[mine]),
            }
        )
    return {"experiment": "leave-one-system-out", "folds": folds, "systems": rows}


def data_efficiency(examples, vectors, config, *, seed, folds, encoder, fractions=None):
    """Pooled test correlation when each fold trains on a fraction of its training contexts."""
    human = np.array([e.score for e in examples])
    rows = []
    for fraction in fractions or FRACTIONS:
        predicted = _pooled(
            examples,
            vectors,
            config,
            seed=seed,
            folds=folds,
            encoder=encoder,
            keep_train=lambda i: True,
            fraction=fraction,
        )
        rows.append({"fraction": fraction, "test": correlations(predicted, human)})
    return {"experiment": "data-efficiency", "folds": folds, "fractions": rows}
