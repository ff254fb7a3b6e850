"""The frozen layers' states of each sequence, computed once per process.

With frozen layers, a sequence's bottom states (`network.Regressor.bottom`) depend on nothing a fit
learns: only on the packaged weights, how many layers are frozen, and the sequence. A 5-fold
cross-validation fits five models on overlapping rows (each row trains four of them and is the
test row of the fifth), then the final refit reads them all again; computing the states once and
keeping them here saves three of every four bottom passes (bench/bench_learned.py --fit-size).

States are float32 tensors of (length, 384): ~1.5 KB a token. The memo keeps the most recently used
`MAX_TOKENS` tokens' worth (~0.75 GB) and forgets the oldest beyond that, so a very large dataset
recomputes some states rather than growing without bound; a cross-validation drops them when it
ends (the kind's `release`), and scoring reads kept states without keeping new ones. A state
computed in another batch can differ from a fresh one by float rounding (~1e-7), far below what a
fit or a figure shows.
"""

import threading
from collections import OrderedDict

from scoring.adem.encoders.minilm import token_batches
from scoring.learned.cross_encoder import network

MAX_TOKENS = 500_000
_MEMO = OrderedDict()  # (frozen layers, ids, types) -> (length, hidden) tensor
_SIZE = {"tokens": 0}
_LOCK = threading.Lock()  # a worker may train and score in several threads


def states(model, encoded, pad_id, *, max_tokens, max_texts=256, keep=True):
    """One (length, hidden) tensor per (ids, types) pair of `encoded`, in order; with `keep`, the
    ones computed here are kept for later calls (never computed in inference mode, since a kept
    state may feed a later fit's autograd graph)."""
    keys = [(model.frozen_layers, tuple(ids), tuple(types)) for ids, types in encoded]
    with _LOCK:
        found = {key: _MEMO[key] for key in set(keys) if key in _MEMO}
        for key in found:
            _MEMO.move_to_end(key)
    # Sorted, so the same rows are batched the same way in every run: one command, one model.
    missing = sorted({key for key in keys if key not in found}, key=lambda key: (len(key[1]), key))
    if missing:
        batches = token_batches([len(key[1]) for key in missing], max_tokens=max_tokens, max_texts=max_texts)
        sequences = [[(list(missing[i][1]), list(missing[i][2])) for i in rows] for rows in batches]
        computed = network.bottom_states(model, sequences, pad_id)
        for i, state in zip((i for rows in batches for i in rows), computed, strict=True):
            found[missing[i]] = state
        if not keep:
            return [found[key] for key in keys]
        with _LOCK:
            for key in missing:
                if key not in _MEMO:
                    _MEMO[key] = found[key]
                    _SIZE["tokens"] += len(key[1])
            while _SIZE["tokens"] > MAX_TOKENS and _MEMO:
                old_key, _ = _MEMO.popitem(last=False)
                _SIZE["tokens"] -= len(old_key[1])
    return [found[key] for key in keys]


def forget():
    with _LOCK:
        _MEMO.clear()
        _SIZE["tokens"] = 0
