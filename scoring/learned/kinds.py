"""The evaluator-kind interface and its registry: name -> trainer.

A trainer is built from a config dict (JSON-able, stored in checkpoints and registry rows) and
gives one fresh, untrained evaluator per fit. An evaluator:

    fit(train, val, *, seed, progress=None) -> FitReport
        learn from the `Rated` list `train`, choose its stopping point on `val` only (it is never
        handed the test rows, so it cannot peek); progress(epoch, train_loss, val_pearson) after
        each epoch (or regularisation step);
    predict(responses, *, progress=None) -> float array, one score per response, in batches;
    save(path, *, extra=None) -> sha256, and the kind's `load(path)` gives it back.

Kinds are named here by module path and imported when first asked for: a cross-encoder pulls
torch and transformers, which pages that only list the kinds must not pay for. Adding a kind is
a module with `KIND` (a `Kind`) plus one line in `_KINDS`.
"""

from dataclasses import dataclass, field
from importlib import import_module


@dataclass
class FitReport:
    curve: list  # one dict per epoch: {"epoch", "train_loss", "val_pearson", ...}
    best_epoch: int
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Kind:
    name: str
    description: str
    new: object  # new(config: dict) -> an untrained evaluator
    load: object  # load(path) -> a trained evaluator
    default_config: object  # () -> dict of the kind's defaults
    release: object = None  # () -> None: drop what the kind kept for one cross-validation's fits


_KINDS = {
    "cross-encoder": "scoring.learned.cross_encoder.trainer",
    "stacked": "scoring.learned.stacked",
}
_EXTRA = {}  # kinds registered at run time (register()): tests, later ensembles


def names():
    return tuple(sorted({*_KINDS, *_EXTRA}))


def register(kind):
    """Add a kind at run time (a name already taken is refused)."""
    if kind.name in _KINDS or kind.name in _EXTRA:
        raise ValueError(f"evaluator kind {kind.name!r} is already registered")
    _EXTRA[kind.name] = kind
    return kind


def unregister(name):
    _EXTRA.pop(name, None)


def get(name):
    if name in _EXTRA:
        return _EXTRA[name]
    if name not in _KINDS:
        raise ValueError(f"unknown evaluator kind {name!r}; expected one of {', '.join(names())}")
    return import_module(_KINDS[name]).KIND
