"""The metric registry: stable names, versions and parameters.

A metric is scored by its *family*: one function that computes several related metrics in one
pass (bleu1..bleu4 share their n-gram counts). Adding a metric is one small module that calls
`register` at import time; `scoring.metrics.__init__` imports every such module.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from scoring.metrics import resources


class MetricUnavailable(RuntimeError):
    """A metric cannot run on this machine (for example METEOR without Java)."""


@dataclass(frozen=True)
class Batch:
    """What every family receives: responses, their references, and the scoring corpus.

    `refs[i]` lists the references of `hyps[i]` (at least one). `corpus` (a `cider.CiderCorpus`)
    describes the whole set being scored; CIDEr's document frequencies come from it, so a chunk of
    a dataset is scored exactly as the whole dataset would be. None means "this batch is the corpus".
    """

    hyps: list
    refs: list
    corpus: object = None

    def __post_init__(self):
        if len(self.hyps) != len(self.refs):
            raise ValueError("hyps and refs differ in length")

    def __len__(self):
        return len(self.hyps)


# family(batch, names) -> {name: sequence of float|None, one per hyp}
Family = Callable[[Batch, frozenset], dict]


@dataclass(frozen=True)
class Metric:
    name: str
    version: str
    family: Family = field(compare=False, repr=False)
    params: dict = field(default_factory=dict, compare=False)
    description: str = ""
    # Scored by array code with nothing loaded first (no model, no Java, no vectors): a process forked
    # for it costs only the fork. compute_metrics forks processes by default only for such metrics.
    forks_cheaply: bool = field(default=False, compare=False)


_REGISTRY: dict[str, Metric] = {}


@dataclass(frozen=True)
class FamilyInfo:
    """How a run's progress names a family, and the resources (`resources.declare`) it loads first:
    a tuple of keys, or a function of the metric names asked for that returns one."""

    label: str
    needs: object = ()

    def resource_keys(self, names):
        return tuple(self.needs(names) if callable(self.needs) else self.needs)


_FAMILIES: dict = {}


def describe_family(family, label, needs=()):
    _FAMILIES[family] = FamilyInfo(label, needs)


def family_info(family):
    return _FAMILIES.get(family) or FamilyInfo(getattr(family, "__module__", "metrics").rsplit(".", 1)[-1])


@dataclass(frozen=True)
class Progress:
    """What `score` reports before each family: its label, the metrics scored so far of `total`,
    and the resources it is about to load (none once this process holds them)."""

    family: str
    done: int
    total: int
    loading: tuple = ()


def register(metric: Metric) -> Metric:
    existing = _REGISTRY.get(metric.name)
    if existing is not None and existing.version != metric.version:
        raise ValueError(f"metric {metric.name!r} registered twice with versions {existing.version}, {metric.version}")
    _REGISTRY[metric.name] = metric
    return metric


def get(name: str) -> Metric:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def all_metrics() -> list[Metric]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def score(hyps, refs, names=None, *, corpus=None, progress=None) -> dict:
    """Score responses with the named metrics (all registered ones when `names` is None).

    Returns `{name: list of float|None}` in the order of `hyps`. `progress`, if given, is called
    with a `Progress` before each family (after the last one too, with `done == total`). A family's
    resources are loaded (`resources.ensure`) before it scores, so the loading is reported first.
    """
    # lists are taken as they are: a copy of each response's reference list is one new object per
    # response, and at 100,000 responses the garbage collections they set off cost a tenth of BLEU
    batch = Batch(list(hyps), [r if type(r) is list else list(r) for r in refs], corpus)
    metrics = [get(n) for n in names] if names is not None else all_metrics()
    by_family: dict = {}
    for metric in metrics:
        by_family.setdefault(metric.family, set()).add(metric.name)
    out = {}
    done, total = 0, sum(len(wanted) for wanted in by_family.values())
    needs = {family: family_info(family).resource_keys(frozenset(wanted)) for family, wanted in by_family.items()}
    # the JVM starts while this process loads the rest (MiniLM, WordNet) or scores
    resources.start_in_background([key for keys in needs.values() for key in keys])
    for family, wanted in by_family.items():
        info, keys = family_info(family), needs[family]
        if progress is not None:
            progress(Progress(info.label, done, total, tuple(resources.pending(keys))))
        for key in keys:
            resources.ensure(key)
        values = family(batch, frozenset(wanted))
        for name in wanted:
            out[name] = _as_floats(values[name])
        done += len(wanted)
    if progress is not None:
        progress(Progress("", done, total))
    return out


# Pairs a family that scores each pair on its own takes at once (BLEU, ROUGE-L; the GloVe metrics
# pass a smaller block of their own). Its arrays grow with the batch and outgrow the CPU caches:
# BLEU-1..4 of 1,000,000 pairs in one batch ran at 123k pairs/s, in blocks of 10,000 at 277k
# (50,000: 248k); ROUGE-L 164k -> 413k. Chunks of a run (2,000) are one block.
PAIR_BLOCK = 10_000


def in_blocks(score_block, hyps, refs, size=None):
    """`score_block(hyps, refs)` over blocks of at most `size` pairs (PAIR_BLOCK by default), joined
    as if scored at once. An empty batch is one (empty) block.

    `score_block` returns an array whose last axis runs over the pairs, or a tuple or dict of them.
    """
    size = size or PAIR_BLOCK
    if len(hyps) <= size:
        return score_block(hyps, refs)
    parts = [score_block(hyps[start : start + size], refs[start : start + size]) for start in range(0, len(hyps), size)]
    if isinstance(parts[0], dict):
        return {key: np.concatenate([part[key] for part in parts], axis=-1) for key in parts[0]}
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(arrays, axis=-1) for arrays in zip(*parts, strict=True))
    return np.concatenate(parts, axis=-1)


def _as_floats(values):
    """Plain Python floats (None where undefined) from an array or a list."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        floats = values.tolist()
        return [None if math.isnan(v) else v for v in floats] if np.isnan(values).any() else floats
    return [None if v is None else float(v) for v in values]
