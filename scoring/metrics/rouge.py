"""ROUGE-L as pycocoevalcap's Rouge (nlg-eval): LCS F-measure with beta 1.2.

Faithful details: tokens come from `str.split(" ")` (so double spaces make empty tokens and an
empty string is one empty token), and with several references precision and recall are each
maximised over the references *separately* before they are combined.

The LCS length is computed bit-parallel (Allison-Dix / Hyyro): one machine word per pair holds a
row of the DP table, and a whole batch of pairs advances one hypothesis token at a time with numpy;
which reference positions hold each hypothesis token comes from one sort of the batch's tokens.
References longer than 63 tokens use the same recurrence on Python integers.
"""

import numpy as np

from scoring.metrics.ngrams import tokenize_many
from scoring.metrics.registry import Metric, describe_family, in_blocks, register

BETA = 1.2
WORD = 63  # b of at most this many tokens takes one uint64 per pair; longer, Python integers
KEY_BITS = 63  # `_match_masks` packs its keys into non-negative int64


def lcs_lengths(ids, a, b):
    """LCS length of token sequences a[i] and b[i]; bit vectors run over b.

    `ids` holds all token ids; `a` and `b` are (starts, lengths) arrays into it, one entry per pair.
    """
    a_start, a_len = a
    b_start, b_len = b
    out = np.zeros(len(a_start), dtype=np.int64)
    short = np.flatnonzero(b_len <= WORD)
    long = np.flatnonzero(b_len > WORD)
    if len(short):
        layout = _key_layout(ids, a_len[short], b_len[short])
        room = KEY_BITS - sum(layout) - 1  # bits left for the pair in `_match_masks`'s keys (1: side)
        if room < 0:  # tokens too many or texts too long to pack: never with real dialogue
            long, short = np.arange(len(a_start)), short[:0]
        per_call = 1 << max(room, 0)
        for first in range(0, len(short), per_call):
            rows = short[first : first + per_call]
            out[rows] = _lcs_bitparallel(ids, (a_start[rows], a_len[rows]), (b_start[rows], b_len[rows]), layout)
    for i in long:
        out[i] = _lcs_bigint(
            ids[a_start[i] : a_start[i] + a_len[i]].tolist(), ids[b_start[i] : b_start[i] + b_len[i]].tolist()
        )
    return out


def _key_layout(ids, a_len, b_len):
    """`(token bits, position bits)` of `_match_masks`'s keys; one bit for the side, the pair the rest."""
    longest = max(int(a_len.max(initial=0)), int(b_len.max(initial=0)))
    return max(int(ids.max(initial=0)).bit_length(), 1), max(longest - 1, 1).bit_length()


def _lcs_bitparallel(ids, a, b, layout):
    """Hyyroe's bit-vector LCS for pairs whose b has at most WORD tokens, all pairs at once.

    Step i handles token i of every a that has one: `u = v & match; v = (v + u) | (v - u)` on one
    uint64 per pair, where `match` has bit j set when b[j] is that token (`_match_masks`). Pairs
    are ranked longest a first, so the pairs still running at step i are a prefix, and the match
    masks are laid out step by step, so that each step reads one contiguous slice. Arithmetic is
    modulo 2^64: bits above b's length stand for positions that never match, which leave the LCS
    as it is.
    """
    a_start, a_len = a
    b_len = b[1]
    m = len(a_start)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    by_length = np.argsort(-a_len, kind="stable")  # rank -> pair
    rank = np.empty(m, dtype=np.int64)
    rank[by_length] = np.arange(m)
    steps = int(a_len[by_length[0]])
    running = np.cumsum(np.bincount(a_len, minlength=steps + 1)[::-1])[::-1][1:]  # pairs with a_len > i
    step_start = np.zeros(1 << layout[1], dtype=np.int64)  # every position a key can hold
    step_start[:steps] = np.cumsum(running) - running
    masks = _match_masks(ids, a, b, rank=rank, step_start=step_start, layout=layout)
    v = np.full(m, np.uint64(0xFFFFFFFFFFFFFFFF))
    u = np.empty(m, dtype=np.uint64)
    w = np.empty(m, dtype=np.uint64)
    for k, start in zip(running.tolist(), step_start.tolist(), strict=False):
        vk, uk, wk = v[:k], u[:k], w[:k]
        np.bitwise_and(vk, masks[start : start + k], out=uk)
        np.subtract(vk, uk, out=wk)
        np.add(vk, uk, out=vk)
        np.bitwise_or(vk, wk, out=vk)
    width = np.left_shift(np.uint64(1), b_len[by_length].astype(np.uint64)) - np.uint64(1)
    lcs = np.empty(m, dtype=np.int64)
    lcs[by_length] = np.bitwise_count(~v & width)
    return lcs


def _match_masks(ids, a, b, *, rank, step_start, layout):
    """The match mask of every token of every a, at `step_start[position] + rank[pair]`.

    A token's mask has bit j set where b[j] is that token. One sort and no search: each token of a
    and b becomes a key `rank | token id | side | position` (b's side sorts first), so after the
    sort the tokens of one (pair, token id) are a run, b's first, and the OR of the run's b bits
    is the mask of each a token in it. The elementwise work runs on every key, a's and b's, rather
    than picking a's out first (numpy's gathers and boolean selections cost several times more per
    element than its arithmetic), and in place where it can: a fresh array of this size costs its
    page faults again, as much as the arithmetic.
    """
    token_bits, position_bits = layout
    n_b, n_a = int(b[1].sum()), int(a[1].sum())
    packed = np.empty(n_b + n_a, dtype=np.int64)
    _keys(ids, b, rank=rank, side=0, layout=layout, out=packed[:n_b])
    _keys(ids, a, rank=rank, side=1, layout=layout, out=packed[n_b:])
    packed.sort()
    position = packed & ((1 << position_bits) - 1)
    group = packed >> (position_bits + 1)
    starts = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    side = packed  # the keys are not needed any more
    np.right_shift(packed, position_bits, out=side)
    side &= 1
    # b's bits, none for a's tokens (side - 1 is all ones for b, zero for a)
    bits = np.left_shift(np.uint64(1), position.view(np.uint64))
    bits &= side.view(np.uint64) - np.uint64(1)
    mask = np.repeat(np.bitwise_or.reduceat(bits, starts), np.diff(starts, append=len(packed)))
    # a's tokens go to their places, b's to one extra slot at the end, cut off
    place = step_start[position]
    group >>= token_bits  # the rank
    place += group
    place -= n_a
    place *= side
    place += n_a
    masks = np.zeros(n_a + 1, dtype=np.uint64)
    masks[place] = mask
    return masks[:n_a]


def _keys(ids, seqs, *, rank, side, layout, out):
    """`rank | token id | side | position` of every token of `seqs = (starts, lengths)`, into `out`."""
    token_bits, position_bits = layout
    start, length = seqs
    n = len(out)
    first = np.cumsum(length) - length
    position = np.arange(n, dtype=np.int64)
    position -= np.repeat(first, length)
    key = out
    key[:] = np.repeat(rank, length)
    key <<= token_bits
    if n and (len(start) == 1 or (start[1:] == start[:-1] + length[:-1]).all()):  # one run of ids
        key |= ids[start[0] : start[0] + n]
    else:
        key |= ids[np.repeat(start, length) + position]
    key <<= 1
    key |= side
    key <<= position_bits
    key |= position


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
    return {"rouge_l": in_blocks(rouge_l, batch.hyps, batch.refs)}


register(
    Metric(
        "rouge_l",
        "1",
        _family,
        {"beta": BETA, "tokens": 'split(" ")', "multi_ref": "max precision and max recall separately"},
        "ROUGE-L (LCS F-measure, beta 1.2), pycocoevalcap/nlg-eval definition.",
        forks_cheaply=True,
    )
)
describe_family(_family, "ROUGE-L")
