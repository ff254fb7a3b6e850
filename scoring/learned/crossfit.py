"""k-fold training by context with pooled out-of-fold predictions, for any evaluator kind.

The folds are ADEM's (`scoring.adem.splits.kfold_by_context`): every context's responses sit in
one test fold, and each fold's validation contexts (for early stopping) come out of its training
contexts. Each fold's evaluator is handed its training and validation rows only, so the test
rows' scores and features never reach a fit; a guard checks the split before each fit, so a
split that leaked a context would stop the run instead of flattering it.

With `refit`, a last evaluator is trained on every context but a validation slice (fold 0's, so
the slice is the one the folds already drew) and is the one to register and score with; the
pooled figures describe models that never saw the rows they scored.
"""

import time
from dataclasses import dataclass

import numpy as np

from scoring.adem.evaluate import correlations, system_level
from scoring.adem.splits import kfold_by_context
from scoring.learned import kinds


class LeakError(RuntimeError):
    """A split put one context on both sides (training or validation, and test)."""


@dataclass(frozen=True)
class Step:
    """One progress report: which fit ("fold" k of `folds`, or the "final" refit) and its epoch."""

    stage: str
    fold: int | None
    folds: int
    epoch: int
    train_loss: float
    val_pearson: float


def check_disjoint(context_ids, train_idx, val_idx, test_idx):
    seen = {context_ids[i] for i in train_idx} | {context_ids[i] for i in val_idx}
    leaked = seen & {context_ids[i] for i in test_idx}
    if leaked:
        raise LeakError(f"{len(leaked)} test context(s) also in training or validation, e.g. {sorted(leaked)[0]!r}")
    overlap = {context_ids[i] for i in train_idx} & {context_ids[i] for i in val_idx}
    if overlap:
        raise LeakError(f"{len(overlap)} validation context(s) also in training, e.g. {sorted(overlap)[0]!r}")


def _reporter(progress, stage, fold, folds):
    if progress is None:
        return None

    def report(epoch, train_loss, val_pearson):
        progress(Step(stage, fold, folds, epoch, float(train_loss), float(val_pearson)))

    return report


def _fit(kind, config, rated, train_idx, val_idx, *, seed, progress):
    evaluator = kind.new(config)
    report = evaluator.fit([rated[i] for i in train_idx], [rated[i] for i in val_idx], seed=seed, progress=progress)
    return evaluator, report


def checked_config(kind_name, config):
    """The kind's defaults updated with `config`; ValueError for a setting it has not or a value it refuses."""
    kind = kinds.get(kind_name)
    defaults = kind.default_config()
    unknown = set(config or {}) - set(defaults)
    if unknown:
        raise ValueError(f"the {kind_name} kind has no setting {', '.join(sorted(unknown))}")
    merged = {**defaults, **(config or {})}
    kind.new(merged)  # a kind checks its values when built (nothing is loaded before a fit)
    return merged


def cross_validate(kind_name, rated, *, folds=5, seed=0, config=None, progress=None, refit=True):
    """(final evaluator or None, results) for `kind_name` trained on the `Rated` list `rated`.

    results: {"test": pooled correlations over every response, "system_level", "folds": one
    summary per fold, "curves": each fold's learning curve, "curve"/"best_epoch" of the final
    fit, "split", "predictions", "seconds": {"folds", "final"}, "config"}.
    """
    kind = kinds.get(kind_name)
    try:
        return _cross_validate(
            kind, kind_name, rated, folds=folds, seed=seed, config=config, progress=progress, refit=refit
        )
    finally:
        if kind.release is not None:  # what the kind kept for this run's fits (the cross-encoder's states)
            kind.release()


def _cross_validate(kind, kind_name, rated, *, folds, seed, config, progress, refit):
    config = checked_config(kind_name, config)
    context_ids = [r.context_id for r in rated]
    splits = kfold_by_context(context_ids, k=folds, seed=seed)
    pooled = np.full(len(rated), np.nan, dtype=np.float64)
    fold_results, curves = [], []
    started = time.perf_counter()
    for k, (train_idx, val_idx, test_idx) in enumerate(splits):
        check_disjoint(context_ids, train_idx, val_idx, test_idx)
        fold_started = time.perf_counter()
        evaluator, report = _fit(
            kind, config, rated, train_idx, val_idx, seed=seed + k, progress=_reporter(progress, "fold", k, folds)
        )
        pooled[test_idx] = evaluator.predict([rated[i] for i in test_idx])
        best = report.curve[report.best_epoch - 1] if report.curve else {}
        fold_results.append(
            {
                "fold": k,
                "best_epoch": report.best_epoch,
                "val_pearson": best.get("val_pearson"),
                "test": correlations(pooled[test_idx], [rated[i].score for i in test_idx]),
                "train_n": len(train_idx),
                "val_n": len(val_idx),
                "test_n": len(test_idx),
                "seconds": round(time.perf_counter() - fold_started, 2),
            }
        )
        curves.append(report.curve)
    folds_seconds = time.perf_counter() - started
    human = [r.score for r in rated]
    results = {
        "kind": kind_name,
        "config": config,
        "test": correlations(pooled, human),
        "system_level": system_level(pooled, human, [r.system for r in rated]),
        "folds": fold_results,
        "curves": curves,
        "predictions": [
            {
                "response_id": r.response_id,
                "context_id": r.context_id,
                "system": r.system,
                "human": float(r.score),
                "predicted": float(p),
            }
            for r, p in zip(rated, pooled, strict=True)
        ],
        "seconds": {"folds": round(folds_seconds, 2), "final": None},
    }
    final = None
    if refit:
        train_idx, val_idx, test_idx = splits[0]
        everything_else = np.sort(np.concatenate([train_idx, test_idx]))
        check_disjoint(context_ids, everything_else, val_idx, [])
        final_started = time.perf_counter()
        final, report = _fit(
            kind, config, rated, everything_else, val_idx, seed=seed, progress=_reporter(progress, "final", None, folds)
        )
        results.update(curve=report.curve, best_epoch=report.best_epoch)
        results["seconds"]["final"] = round(time.perf_counter() - final_started, 2)
        results["split"] = {
            "folds": folds,
            "train": len(everything_else),
            "validation": len(val_idx),
            "test": len(rated),
            # the stacked kind's inner-cv rule fits on its validation rows too (the report says so)
            "fitted_on_validation": bool(report.details.get("fitted_on_validation", False)),
        }
    else:
        results["split"] = {"folds": folds, "test": len(rated)}
    return final, results
