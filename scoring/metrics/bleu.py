"""BLEU as pycocoevalcap (and so nlg-eval) computes it, vectorised over a batch.

Sentence level, per response: whitespace tokens (`str.split()`, case kept), clipped n-gram counts
against the per-n-gram maximum over the references, cumulative orders (bleuK is the geometric mean
of precisions 1..K), brevity penalty against the *closest* reference length (ties: the shorter),
and pycocoevalcap's constants: precision = (matches + 1e-15) / (guesses + 1e-9), length ratio =
(hyp_len + 1e-15) / (ref_len + 1e-9). An empty response therefore scores 0.

Also here: corpus BLEU (pycocoevalcap's aggregate over a system's responses) and smoothed sentence
BLEU-4 (Chen & Cherry 2014, methods 1-3) as separately named extras.
"""

import functools
import math

import numpy as np

from scoring.metrics.ngrams import factorize, tokenize_many
from scoring.metrics.registry import Metric, describe_family, in_blocks, register

TINY = 1e-15
SMALL = 1e-9
ORDERS = 4


def bleu_stats(hyps, refs, n=ORDERS):
    """Per response: hyp length, closest ref length, matches[k], guesses[k] (arrays, k = 0..n-1).

    Clipped counts come from sorting packed n-gram keys (`_packed_matches`); pairs whose tokens do
    not fit the 63 bits of a key are counted by the hashing route (`_factorized_matches`) instead.
    """
    hyps, refs = list(hyps), list(refs)  # indexed below to pick the pairs left out
    n_pairs = len(hyps)
    ref_counts = np.fromiter((len(rs) for rs in refs), np.int64, n_pairs)
    ref_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), ref_counts)
    ids, lengths, _ = tokenize_many(hyps + [r for rs in refs for r in rs])
    testlen = lengths[:n_pairs]
    reflen = _closest_ref_len(testlen, lengths[n_pairs:], ref_pair, n_pairs)
    guesses = np.maximum(0, testlen[None, :] - np.arange(n)[:, None]).astype(float)
    matches, left_out = _packed_matches(ids, lengths, ref_counts, n)
    if len(left_out):
        sub_hyps = [hyps[i] for i in left_out]
        sub_refs = [refs[i] for i in left_out]
        matches[:, left_out] = _factorized_matches(sub_hyps, sub_refs, n)
    return testlen, reflen, matches, guesses


KEY_BITS = 63  # packed keys are non-negative int64


def _packed_matches(ids, lengths, ref_counts, n):
    """`(matches (n, n_pairs), pairs left out)`: clipped n-gram matches by sorting packed keys.

    Exact, no hashing. A key is `pair | n-gram | tag`, the tag saying where the occurrence is (0: the
    response, r + 1: the pair's r-th reference), so after a sort every (pair, n-gram, tag) is a run
    of equal keys and the runs of one (pair, n-gram) are adjacent. Unigrams are keyed by global
    token id; that sort also ranks each pair's *shared* tokens (in the response and in a reference),
    and longer n-grams, which can only match when made of shared tokens, pack those local ranks in
    `width` bits each. Pairs with more shared tokens than that holds are returned as left out (their
    unigram matches are right all the same); the caller counts them another way.
    """
    n_pairs = len(ref_counts)
    matches = np.zeros((n, n_pairs))
    everyone = np.arange(n_pairs)
    if n_pairs == 0 or len(ids) == 0 or n == 0:
        return matches, everyone[:0]
    pair_bits = max(n_pairs - 1, 0).bit_length()
    tag_bits = max(int(ref_counts.max()).bit_length(), 1)
    vocab_bits = max(int(ids.max()).bit_length(), 1)
    width = (KEY_BITS - pair_bits - tag_bits) // n  # bits per local token id at most
    if width < 1 or pair_bits + vocab_bits + tag_bits > KEY_BITS:
        return matches, everyone
    tag_mask = (1 << tag_bits) - 1
    tok_pair, tok_tag, left = _token_layout(lengths, ref_counts)
    unigram = (((tok_pair << vocab_bits) | ids) << tag_bits) | tok_tag
    order, keys = _argsort_keys(unigram, pair_bits + vocab_bits + tag_bits)
    matches[0] = _clipped_per_pair(keys, tag_mask, tag_bits, vocab_bits + tag_bits, n_pairs)
    local, shared, n_shared = _local_ids(keys, order, tag_bits, vocab_bits, n_pairs)
    fits = n_shared <= 1 << width
    shared &= fits[tok_pair]
    pair_shift = n * width + tag_bits
    base = (tok_pair << pair_shift) | tok_tag  # the n-gram goes between pair and tag
    gram, candidate = local, shared
    for k in range(1, n):
        # the k+1-gram starting at i: the k-gram at i, then the token at i + k
        gram = (gram[:-1] << width) | local[k:]
        candidate = candidate[:-1] & shared[k:]
        inside = candidate & (left[: len(gram)] > k)  # and it ends inside its sentence
        keys = np.sort(base[: len(gram)][inside] | (gram[inside] << tag_bits))
        matches[k] = _clipped_per_pair(keys, tag_mask, tag_bits, pair_shift, n_pairs)
    return matches, everyone[~fits]


def _token_layout(lengths, ref_counts):
    """Per token: its pair, its tag (0: response, r + 1: r-th reference) and tokens left in its sentence.

    Segments are the responses, one per pair, then every pair's references in order.
    """
    n_pairs = len(ref_counts)
    ref_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), ref_counts)
    first_ref = np.cumsum(ref_counts) - ref_counts
    ref_tag = np.arange(len(ref_pair), dtype=np.int64) - first_ref[ref_pair] + 1
    pair_of_seg = np.concatenate((np.arange(n_pairs, dtype=np.int64), ref_pair))
    tag_of_seg = np.concatenate((np.zeros(n_pairs, np.int64), ref_tag))
    starts = np.cumsum(lengths) - lengths
    total = int(lengths.sum())
    left = np.repeat(lengths + starts, lengths) - np.arange(total, dtype=np.int64)
    return np.repeat(pair_of_seg, lengths), np.repeat(tag_of_seg, lengths), left


def _local_ids(keys, order, tag_bits, vocab_bits, n_pairs):
    """`(local ids, shared, shared count per pair)` from the sorted unigram keys and their positions.

    A token is shared when its pair's response and one of its references both hold it; only n-grams
    of shared tokens can match. A shared token's local id is its rank among its pair's distinct
    shared tokens, so few bits hold it whatever the size of the whole vocabulary (other tokens' ids
    are meaningless).
    """
    token = keys >> tag_bits  # pair and global id
    tag = keys & ((1 << tag_bits) - 1)
    starts = np.flatnonzero(_changes(token))
    ends = np.append(starts[1:], len(keys)) - 1
    # within a token's run the tags ascend: the response's occurrences come first
    shared_token = (tag[starts] == 0) & (tag[ends] != 0)
    first_shared = np.zeros(len(keys), bool)
    first_shared[starts[shared_token]] = True
    seen = np.cumsum(first_shared)  # distinct shared tokens up to here, inclusive
    pair = token >> vocab_bits
    # `seen - first_shared` is non-decreasing: a running maximum carries each pair's count before it on
    before_pair = np.maximum.accumulate(np.where(_changes(pair), seen - first_shared, 0))
    local = np.empty(len(keys), np.int64)
    local[order] = seen - 1 - before_pair
    shared = np.zeros(len(keys), bool)
    shared[order] = np.repeat(shared_token, ends - starts + 1)
    return local, shared, np.bincount(pair[starts[shared_token]], minlength=n_pairs)


def _argsort_keys(keys, key_bits):
    """`(order, keys[order])` for non-negative keys below 2**key_bits.

    When the position fits beside the key, one plain sort of `key << bits | position` does it:
    several times faster than argsort, and ties come out in position order as in a stable sort.
    """
    pos_bits = max(len(keys) - 1, 0).bit_length()
    if key_bits + pos_bits > KEY_BITS:
        order = np.argsort(keys, kind="stable")
        return order, keys[order]
    packed = np.sort((keys << pos_bits) | np.arange(len(keys), dtype=np.int64))
    return packed & ((1 << pos_bits) - 1), packed >> pos_bits


def _clipped_per_pair(keys, tag_mask, tag_bits, pair_shift, n_pairs):
    """Per pair, the sum over the response's n-grams of min(count in response, max count in a reference).

    `keys` are sorted `pair | n-gram | tag` keys, one per occurrence, so each (pair, n-gram, tag) is a
    run of equal keys, and the runs of one (pair, n-gram) are adjacent, the response's (tag 0) first.
    """
    if not len(keys):
        return np.zeros(n_pairs)
    starts = np.flatnonzero(_changes(keys))
    count = np.diff(starts, append=len(keys))  # occurrences of each (pair, n-gram, tag)
    run_key = keys[starts]
    gram = run_key >> tag_bits  # pair and n-gram
    if tag_mask == 1:  # one reference each: a match is a response run right before a reference run
        ref_run = np.flatnonzero(gram[1:] == gram[:-1]) + 1
        hyp_run = ref_run - 1
        in_refs = count[ref_run]
    else:  # a reference run of an n-gram whose first run is the response's
        group = np.flatnonzero(_changes(gram))
        group_of_run = np.repeat(group, np.diff(group, append=len(gram)))
        ref_run = np.flatnonzero(((run_key[group_of_run] & tag_mask) == 0) & ((run_key & tag_mask) != 0))
        hyp_run = group_of_run[ref_run]
        # the most any one reference holds each such n-gram: runs of one n-gram are adjacent
        first = np.flatnonzero(_changes(hyp_run))
        hyp_run = hyp_run[first]
        in_refs = np.maximum.reduceat(count[ref_run], first) if len(first) else count[:0]
    clipped = np.minimum(count[hyp_run], in_refs)
    return np.bincount(gram[hyp_run] >> (pair_shift - tag_bits), weights=clipped, minlength=n_pairs)


def _changes(sorted_values):
    """Boolean mask: True where a value differs from the one before (and at 0)."""
    new = np.empty(len(sorted_values), bool)
    new[:1] = True
    np.not_equal(sorted_values[1:], sorted_values[:-1], out=new[1:])
    return new


def _factorized_matches(hyps, refs, n=ORDERS):
    """Clipped matches `(n, len(hyps))` by hashing: the route for pairs `_packed_matches` cannot pack.

    Every n-gram occurrence gets a code for (response, n-gram) by hashing (ngrams.factorize), so
    clipped counts are bincounts: no sorting, no Python loop over sentences.
    """
    n_pairs = len(hyps)
    ref_counts = np.fromiter((len(rs) for rs in refs), np.int64, n_pairs)
    ref_pair = np.repeat(np.arange(n_pairs, dtype=np.int64), ref_counts)
    ids, lengths, _ = tokenize_many(list(hyps) + [r for rs in refs for r in rs])
    testlen = lengths[:n_pairs]
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
    code = factorize(pair_of_seg[seg] * vocab + ids)
    matches = np.zeros((n, n_pairs))
    for k in range(n):
        if k:  # extend by one token; positions whose n-gram would leave the sentence drop out
            keep = left[pos] > k
            pos, code, seg = pos[keep], code[keep], seg[keep]
            code = factorize(code * vocab + ids[pos + k])
        nh = int(np.searchsorted(pos, hyp_tokens))
        hyp_code, ref_code = code[:nh], code[nh:]
        n_codes = int(code.max()) + 1 if len(code) else 0
        hyp_count = np.bincount(hyp_code, minlength=n_codes)
        if multi:  # the most times any one reference holds the n-gram
            per_ref = factorize(seg[nh:] * max(n_codes, 1) + ref_code)
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
    return matches


def _closest_ref_len(testlen, ref_len, ref_pair, n_pairs):
    if len(ref_len) == n_pairs:  # one reference each
        return ref_len.astype(np.int64)
    diff = np.abs(ref_len - testlen[ref_pair])
    order = np.lexsort((ref_len, diff, ref_pair))
    first = np.concatenate(([True], ref_pair[order][1:] != ref_pair[order][:-1]))
    return ref_len[order][first]


def sentence_bleu(hyps, refs, n=ORDERS):
    """`array (n, len(hyps))`: row k is BLEU-(k+1) of each response, as pycocoevalcap's Bleu."""
    return _combine(*_stats_in_blocks(hyps, refs, n))


def _stats_in_blocks(hyps, refs, n=ORDERS):
    return in_blocks(functools.partial(bleu_stats, n=n), list(hyps), list(refs))


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
    testlen, reflen, matches, guesses = _stats_in_blocks(hyps, refs, n)
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
    stats = _stats_in_blocks(batch.hyps, batch.refs)
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
            forks_cheaply=True,
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
            forks_cheaply=True,
        )
    )
describe_family(_family, "BLEU")

assert math.isclose(TINY / SMALL, 1e-6)  # pycocoevalcap's constants, kept verbatim
