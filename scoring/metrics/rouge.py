"""ROUGE-L as pycocoevalcap's Rouge (nlg-eval): LCS F-measure with beta 1.2.

Faithful details: tokens come from `str.split(" ")` (so double spaces make empty tokens and an
empty string is one empty token), and with several references precision and recall are each
maximised over the references *separately* before they are combined.

The LCS length is computed bit-parallel (Allison-Dix / Hyyro): one machine word per pair holds a
row of the DP table, and a whole batch of pairs advances one hypothesis token at a time with numpy.
References longer than 63 tokens use the same recurrence on Python integers.
"""

import numpy as np

from scoring.metrics.ngrams import tokenize_many
from scoring.metrics.registry import Metric, register

BETA = 1.2
WORD = 63  # bits per uint64 lane we use (keeps the carry in range)


def lcs_lengths(ids, a, b):
    """LCS length of token sequences a[i] and b[i]; bit vectors run over b.

    `ids` holds all token ids; `a` and `b` are (starts, lengths) arrays into it, one entry per pair.
    """
    a_start, a_len = a
    b_start, b_len = b
    n = len(a_start)
    out = np.zeros(n, dtype=np.int64)
    short = np.flatnonzero(b_len <= WORD)
    # group short pairs by response length so little time goes to padding
    if len(short):
        buckets = np.where(a_len[short] <= 8, a_len[short], 8 + (a_len[short] + 7) // 8)
        for bucket in np.unique(buckets):
            rows = short[buckets == bucket]
            out[rows] = _lcs_bitparallel(ids, (a_start[rows], a_len[rows]), (b_start[rows], b_len[rows]))
    for i in np.flatnonzero(b_len > WORD):
        out[i] = _lcs_bigint(
            ids[a_start[i] : a_start[i] + a_len[i]].tolist(), ids[b_start[i] : b_start[i] + b_len[i]].tolist()
        )
    return out


def _lcs_bitparallel(ids, a, b):
    a_start, a_len = a
    b_start, b_len = b
    la, lb = int(a_len.max()), int(b_len.max())
    m = len(a_start)
    if la == 0 or lb == 0:
        return np.zeros(m, dtype=np.int64)
    ja, jb = np.arange(la), np.arange(lb)
    mask_a = ja[None, :] < a_len[:, None]
    mask_b = jb[None, :] < b_len[:, None]
    # padding never matches: -1 in a, -2 in b
    tokens_a = np.where(mask_a, ids[np.where(mask_a, a_start[:, None] + ja[None, :], 0)], -1)
    tokens_b = np.where(mask_b, ids[np.where(mask_b, b_start[:, None] + jb[None, :], 0)], -2)
    bits = np.left_shift(np.uint64(1), jb.astype(np.uint64))
    full = np.uint64((1 << WORD) - 1)
    v = np.full(m, full, dtype=np.uint64)
    zero = np.uint64(0)
    for i in range(la):
        match = np.bitwise_or.reduce(np.where(tokens_a[:, i : i + 1] == tokens_b, bits, zero), axis=1)
        u = v & match
        v = ((v + u) | (v - u)) & full
    width = np.left_shift(np.uint64(1), b_len.astype(np.uint64)) - np.uint64(1)
    return _popcount(~v & width)


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount(x):
    return _BYTE_BITS[x.view(np.uint8).reshape(len(x), 8)].sum(axis=1)


def _lcs_bigint(a, b):
    masks = {}
    for j, tok in enumerate(b):
        masks[tok] = masks.get(tok, 0) | (1 << j)
    full = (1 << len(b)) - 1
    v = full
    for tok in a:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return bin(~v & full).count("1")


def rouge_l(hyps, refs, beta=BETA):
    """ROUGE-L F of each response against its references (pycocoevalcap semantics)."""
    n = len(hyps)
    ref_pair = np.repeat(np.arange(n), [len(rs) for rs in refs])
    ids, lengths, _ = tokenize_many(list(hyps) + [r for rs in refs for r in rs], sep=" ")
    starts = np.cumsum(lengths) - lengths
    lcs = lcs_lengths(ids, (starts[ref_pair], lengths[ref_pair]), (starts[n:], lengths[n:])).astype(float)
    hyp_len = lengths[:n].astype(float)
    ref_len = lengths[n:].astype(float)
    prec = np.full(n, -np.inf)
    rec = np.full(n, -np.inf)
    np.maximum.at(prec, ref_pair, lcs / hyp_len[ref_pair])
    np.maximum.at(rec, ref_pair, lcs / ref_len)
    b2 = beta**2
    with np.errstate(invalid="ignore", divide="ignore"):
        score = ((1 + b2) * prec * rec) / (rec + b2 * prec)
    return np.where((prec != 0) & (rec != 0), score, 0.0)


def _family(batch, names):
    return {"rouge_l": rouge_l(batch.hyps, batch.refs)}


register(
    Metric(
        "rouge_l",
        "1",
        _family,
        {"beta": BETA, "tokens": 'split(" ")', "multi_ref": "max precision and max recall separately"},
        "ROUGE-L (LCS F-measure, beta 1.2), pycocoevalcap/nlg-eval definition.",
    )
)
