"""ADEM's two experiments for any learned evaluator kind, with ADEM's folds and result shapes.

- leave-one-system-out: per system, its responses' out-of-fold correlation when each fold's model
  was trained with, then without, that system's responses;
- data-efficiency: the pooled out-of-fold correlation when each fold trains on a fraction of its
  training contexts (whole contexts drawn, so the smaller sets stay split by context).

Each fold's split passes crossfit's leak guard before its fit, as in cross-validation.
"""

import numpy as np

from scoring.adem.evaluate import correlations
from scoring.adem.splits import kfold_by_context
from scoring.learned import kinds
from scoring.learned.crossfit import check_disjoint

# ADEM's fractions (scoring.adem.experiments, which loads ADEM's torch model code on import)
FRACTIONS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0)
EXPERIMENTS = ("leave-one-system-out", "data-efficiency")


def _pooled(kind, config, rated, *, seed, folds, keep_train, fraction=1.0):
    context_ids = [r.context_id for r in rated]
    predicted = np.full(len(rated), np.nan, dtype=np.float64)
    rng = np.random.default_rng(seed)
    for k, (fold_train, val_idx, test_idx) in enumerate(kfold_by_context(context_ids, k=folds, seed=seed)):
        train_idx = np.array([i for i in fold_train if keep_train(i)], dtype=np.int64)
        if fraction < 1.0:
            contexts = sorted({context_ids[i] for i in train_idx})
            n = max(2, round(len(contexts) * fraction))
            chosen = set(rng.choice(contexts, size=min(n, len(contexts)), replace=False).tolist())
            train_idx = np.array([i for i in train_idx if context_ids[i] in chosen], dtype=np.int64)
        check_disjoint(context_ids, train_idx, val_idx, test_idx)
        evaluator = kind.new(config)
        evaluator.fit([rated[i] for i in train_idx], [rated[i] for i in val_idx], seed=seed + k)
        predicted[test_idx] = evaluator.predict([rated[i] for i in test_idx])
    return predicted


def run(experiment, kind_name, rated, *, seed=0, folds=5, config=None, fractions=None):
    """The experiment's result dict (ADEM's shape, plus "kind")."""
    kind = kinds.get(kind_name)
    config = {**kind.default_config(), **(config or {})}
    human = np.array([r.score for r in rated])
    if experiment == "leave-one-system-out":
        with_all = _pooled(kind, config, rated, seed=seed, folds=folds, keep_train=lambda i: True)
        rows = []
        for system in sorted({r.system for r in rated}):
            mine = np.array([r.system == system for r in rated])
            without = _pooled(
                kind, config, rated, seed=seed, folds=folds, keep_train=lambda i, s=system: rated[i].system != s
            )
            rows.append(
                {
                    "system": system,
                    "trained_with": correlations(with_all[mine], human[mine]),
                    "trained_without": correlations(without[mine], human[mine]),
                }
            )
        return {"experiment": experiment, "kind": kind_name, "folds": folds, "systems": rows}
    if experiment == "data-efficiency":
        rows = []
        for fraction in fractions or FRACTIONS:
            predicted = _pooled(
                kind, config, rated, seed=seed, folds=folds, keep_train=lambda i: True, fraction=fraction
            )
            rows.append({"fraction": fraction, "test": correlations(predicted, human)})
        return {"experiment": experiment, "kind": kind_name, "folds": folds, "fractions": rows}
    raise ValueError(f"unknown experiment {experiment!r}; choose one of {', '.join(EXPERIMENTS)}")
