"""BLEU as pycocoevalcap (and so nlg-eval) computes it, vectorised over a batch.

Sentence level, per response: whitespace tokens (`str.split()`, case kept), clipped n-gram counts
against the per-n-gram maximum over the references, cumulative orders (bleuK is the geometric mean
of precisions 1..K), brevity penalty against the *closest* reference length (ties: the shorter),
and pycocoevalcap's constants: precision = (matches + 1e-15) / (guesses + 1e-9), length ratio =
(hyp_len + 1e-15) / (ref_len + 1e-9). An empty response therefore scores 0.

Also here: corpus BLEU (pycocoevalcap's aggregate over a system's responses) and smoothed sentence
BLEU-4 (Chen & Cherry 2014, methods 1-3) as separately named extras.
"""

import math

import numpy as np
import pandas as pd

from scoring.metrics.ngrams import tokenize_many
from scoring.metrics.registry import Metric, register

TINY = 1e-15
SMALL = 1e-9
ORDERS = 4


def bleu_stats(hyps, refs, n=ORDERS):
    """Per response: hyp length, closest ref length, matches[k], guesses[k] (arrays, k = 0..n-1).

    Every n-gram occurrence gets a code for (response, n-gram) by hashing (pandas factorize), so
    clipped counts are bincounts: no sorting, no Python loop over sentences.
    """
    n_pairs = len(hyps)
    ref_counts = np.fromiter((len(rs) for rs in refs), np.int64, n_pairs)
    ref_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), ref_counts)
    ids, lengths, _ = tokenize_many(list(hyps) + [r for rs in refs for r in rs])
    testlen = lengths[:n_pairs]
    reflen = _closest_ref_len(testlen, lengths[n_pairs:], ref_pair, n_pairs)
    n_segs = len(lengths)
    seg = np.repeat(np.arange(n_segs, dtype=np.int64), lengths)
    pair_of_seg = np.concatenate((np.arange(n_pairs, dtype=np.int64), ref_pair))
    starts = np.cumsum(lengths) - lengths
    # tokens left in the sentence from each position on (inclusive)
    left = np.repeat(lengths, lengths) - (np.arange(len(ids)) - np.repeat(starts, lengths))
    multi = len(ref_pair) != n_pairs
    vocab = int(ids.max()) + 1 if len(ids) else 1
    pos = np.arange(len(ids))
    hyp_tokens = int(testlen.sum())  # responses come first, so their positions are a prefix
    # code of the n-gram starting at each position, tied to its response
    code = _factorize(pair_of_seg[seg] * vocab + ids)
    matches = np.zeros((n, n_pairs))
    guesses = np.maximum(0, testlen[None, :] - np.arange(n)[:, None]).astype(float)
    for k in range(n):
        if k:  # extend by one token; positions whose n-gram would leave the sentence drop out
            keep = left[pos] > k
            pos, code, seg = pos[keep], code[keep], seg[keep]
            code = _factorize(code * vocab + ids[pos + k])
        nh = int(np.searchsorted(pos, hyp_tokens))
        hyp_code, ref_code = code[:nh], code[nh:]
        n_codes = int(code.max()) + 1 if len(code) else 0
        hyp_count = np.bincount(hyp_code, minlength=n_codes)
        if multi:  # the most times any one reference holds the n-gram
            per_ref = _factorize(seg[nh:] * max(n_codes, 1) + ref_code)
            per_ref_count = np.bincount(per_ref)
            code_of = np.zeros(len(per_ref_count), np.int64)
            code_of[per_ref] = ref_code
            ref_max = np.zeros(n_codes, np.int64)
            np.maximum.at(ref_max, code_of, per_ref_count)
        else:
            ref_max = np.bincount(ref_code, minlength=n_codes)
        clipped = np.minimum(hyp_count, ref_max)
        # the response each code belongs to: any occurrence in a response tells
        owner = np.zeros(n_codes, np.int64)
        owner[hyp_code] = seg[:nh]
        matches[k] = np.bincount(owner, weights=clipped, minlength=n_pairs)
    return testlen, reflen, matches, guesses


def _factorize(values):
    return pd.factorize(values)[0].astype(np.int64, copy=False) if len(values) else values


def _closest_ref_len(testlen, ref_len, ref_pair, n_pairs):
    if len(ref_len) == n_pairs:  # one reference each
        return ref_len.astype(np.int64)
    diff = np.abs(ref_len - testlen[ref_pair])
    order = np.lexsort((ref_len, diff, ref_pair))
    first = np.concatenate(([True], ref_pair[order][1:] != ref_pair[order][:-1]))
    return ref_len[order][first]


def sentence_bleu(hyps, refs, n=ORDERS):
    """`array (n, len(hyps))`: row k is BLEU-(k+1) of each response, as pycocoevalcap's Bleu."""
    testlen, reflen, matches, guesses = bleu_stats(hyps, refs, n)
    return _combine(testlen, reflen, matches, guesses)


def _combine(testlen, reflen, matches, guesses):
    n = matches.shape[0]
    out = np.empty_like(matches)
    running = np.ones(matches.shape[1:])
    for k in range(n):
        running = running * ((matches[k] + TINY) / (guesses[k] + SMALL))
        out[k] = running ** (1.0 / (k + 1))
    ratio = (testlen + TINY) / (reflen + SMALL)
    with np.errstate(divide="ignore", over="ignore"):
        penalty = np.where(ratio < 1, np.exp(1 - 1 / ratio), 1.0)
    return out * penalty


def corpus_bleu(hyps, refs, n=ORDERS):
    """pycocoevalcap's corpus score: `[BLEU-1, ..., BLEU-n]` from counts summed over all responses."""
    testlen, reflen, matches, guesses = bleu_stats(hyps, refs, n)
    total = _combine(
        np.array([testlen.sum()]), np.array([reflen.sum()]), matches.sum(axis=1)[:, None], guesses.sum(axis=1)[:, None]
    )
    return [float(v) for v in total[:, 0]]


def smoothed_bleu4(testlen, reflen, matches, guesses, method):
    """Sentence BLEU-4 with Chen & Cherry (2014) smoothing, uniform weights, standard brevity penalty.

    method 1: a zero match count becomes 0.1; method 2: add one to matches and guesses of orders
    2-4 (Lin & Och 2004); method 3: the k-th order with no match gets 1/2^k (NIST). Orders longer
    than the response count one guess, so a short response is not undefined. Empty response: 0.
    """
    g = np.maximum(guesses, 1)
    m = matches.copy()
    if method == 1:
        m = np.where(m == 0, 0.1, m)
    elif method == 2:
        m[1:] += 1
        g = g.astype(float)
        g[1:] = guesses[1:] + 1
    elif method == 3:
        zeros = np.cumsum(m == 0, axis=0)
        m = np.where(m == 0, 1.0 / 2.0**zeros, m)
    with np.errstate(divide="ignore"):
        logp = np.log(m / g).mean(axis=0)
        bp = np.where(testlen > reflen, 1.0, np.exp(1 - reflen / np.maximum(testlen, 1)))
    score = bp * np.exp(logp)
    return np.where(testlen == 0, 0.0, score)


def _family(batch, names):
    stats = bleu_stats(batch.hyps, batch.refs)
    sentence = _combine(*stats)
    out = {f"bleu{k + 1}": sentence[k] for k in range(ORDERS)}
    for method in (1, 2, 3):
        if f"bleu4_smooth{method}" in names:
            out[f"bleu4_smooth{method}"] = smoothed_bleu4(*stats, method=method)
    return out


for _k in range(1, ORDERS + 1):
    register(
        Metric(
            f"bleu{_k}",
            "1",
            _family,
            {"n": _k, "tokens": "whitespace", "reflen": "closest", "tiny": TINY, "small": SMALL},
            f"Sentence BLEU-{_k} (cumulative), pycocoevalcap/nlg-eval definition.",
        )
    )
for _m in (1, 2, 3):
    register(
        Metric(
            f"bleu4_smooth{_m}",
            "1",
            _family,
            {"n": 4, "smoothing": f"chen-cherry-{_m}"},
            f"Sentence BLEU-4 with Chen & Cherry (2014) smoothing method {_m}.",
        )
    )

assert math.isclose(TINY / SMALL, 1e-6)  # pycocoevalcap's constants, kept verbatim
