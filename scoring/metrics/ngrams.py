"""Vectorised n-gram counting over a whole batch of sentences.

Every token of every sentence is mapped to an integer id (Arrow's dictionary encoding), n-grams of
order k get ids by pairing the id of their (k-1)-gram prefix with the id of their last token, and
counts per (sentence, n-gram) come from one sort. BLEU and CIDEr are then array arithmetic.
"""

import importlib
from dataclasses import dataclass
from functools import cache

import numpy as np

from annotation.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
pd = lazy_module("pandas")
pa = lazy_module("pyarrow")


# Arrow's default pool (mimalloc) warms up slowly: after three calls on 10,000 texts, 2,000-pair
# chunks still tokenised up to 6 ms slower (15 ms against 9) for their first few calls, in the main
# thread and again in every new thread (the command starts its threads afresh with every run).
# 10,000 pairs of BLEU end to end took 150-180 ms on the first two runs of a process, ~105 after;
# with the C library's allocator the first run took 116 ms, and no call was slow.
@cache
def _pool():
    return pa.system_memory_pool()


@cache
def _compute():
    """pyarrow.compute, imported at first use (a submodule, looked up on pyarrow itself once it is imported)."""
    return importlib.import_module("pyarrow.compute")


@dataclass
class Counts:
    """Counts of order-k n-grams: row i says sentence `seg[i]` holds n-gram `gram[i]` `count[i]` times.

    Rows are sorted by (seg, gram) and unique.
    """

    seg: np.ndarray
    gram: np.ndarray
    count: np.ndarray
    n_grams: int  # ids are in [0, n_grams)
    # a stable 64-bit hash of each n-gram id's tokens (only with `hashes=True`), so n-grams can be
    # matched against statistics gathered from other batches (CIDEr's corpus document frequencies)
    hashes: np.ndarray | None = None


def tokenize_many(texts, sep=None):
    """Token ids of many texts at once: `(ids, lengths, uniques)` with `text.split(sep)` semantics.

    Arrow splits and dictionary-encodes the texts in C++ without making a Python string per token,
    which was half the time BLEU and ROUGE-L spent on a chunk (a `str.split` over the joined texts,
    then pandas' factorisation of the token objects). Its whitespace is Python's (checked for every
    code point in tests/scoring/test_metrics_engine.py), but where `str.split()` drops the empty
    strings that leading or trailing whitespace and empty texts make, Arrow keeps them: they are
    removed here. `uniques[ids]` are the tokens. Texts Arrow cannot take (lone surrogates, which
    have no UTF-8, or more than 2 GB of text) are split in Python.
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype=object)
    pool, pc = _pool(), _compute()
    try:
        array = pa.array(texts, type=pa.string(), memory_pool=pool)
    except (UnicodeEncodeError, pa.ArrowException):
        array = None
    if not isinstance(array, pa.StringArray) or array.null_count:
        return _tokenize_python(texts, sep)
    if sep is None:
        lists = pc.utf8_split_whitespace(array, memory_pool=pool)
    else:
        lists = pc.split_pattern(array, pattern=sep, memory_pool=pool)
    lengths = pc.list_value_length(lists, memory_pool=pool).to_numpy().astype(np.int64)
    encoded = pc.dictionary_encode(pc.list_flatten(lists, memory_pool=pool), memory_pool=pool)
    ids = encoded.indices.to_numpy().astype(np.int64)
    uniques = encoded.dictionary.to_numpy(zero_copy_only=False)
    if sep is None:
        empty = np.flatnonzero(uniques == "")
        if len(empty):
            dropped = ids == empty[0]
            owner = np.repeat(np.arange(n, dtype=np.int64), lengths)[dropped]
            lengths = lengths - np.bincount(owner, minlength=n)
            ids = ids[~dropped]
    return ids, lengths, uniques


def _tokenize_python(texts, sep):
    tokens = [t.split(sep) for t in texts]
    ids, _, lengths = tokens_to_ids(tokens)
    uniques = pd.unique(np.asarray([tok for t in tokens for tok in t], dtype=object))
    return ids, lengths, uniques


def tokens_to_ids(sentences):
    """Flat token ids, the sentence of each token and each sentence's length."""
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    flat = [tok for s in sentences for tok in s]
    if flat:
        ids, _ = pd.factorize(np.asarray(flat, dtype=object))
        ids = ids.astype(np.int64)
    else:
        ids = np.zeros(0, dtype=np.int64)
    seg = np.repeat(np.arange(len(sentences), dtype=np.int64), lengths)
    return ids, seg, lengths


HASH_MULTIPLIER = np.uint64(0x100000001B3)  # FNV prime: spreads the rolling hash over 64 bits


def count_ngrams(sentences, n=4, *, hashes=False):
    """`[Counts for order 1, ..., order n]` for lists of tokens; ids are shared by all sentences."""
    ids, _, lengths = tokens_to_ids(sentences)
    tok_hash = None
    if hashes:
        flat = np.asarray([tok for s in sentences for tok in s], dtype=object)
        tok_hash = pd.util.hash_array(flat) if len(flat) else np.zeros(0, np.uint64)
    return count_ngram_ids(ids, lengths, n, tok_hash=tok_hash)


def count_texts(texts, n=4, *, hashes=False):
    """`count_ngrams` of `text.split()` for each text, tokenised in one pass (tokenize_many)."""
    ids, lengths, uniques = tokenize_many(texts)
    tok_hash = None
    if hashes:
        # pandas' hash is keyed with a fixed key, so it is the same in every process
        tok_hash = pd.util.hash_array(uniques)[ids] if len(ids) else np.zeros(0, np.uint64)
    return count_ngram_ids(ids, lengths, n, tok_hash=tok_hash), lengths


def count_ngram_ids(ids, lengths, n=4, *, tok_hash=None):
    """Counts from flat token ids and sentence lengths; `tok_hash` (per token) adds n-gram hashes."""
    hashes = tok_hash is not None
    seg = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    rolling = tok_hash
    total = len(ids)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if len(lengths) else np.zeros(0, np.int64)
    # position of each token inside its sentence, and how many tokens follow it there
    pos = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    left = np.repeat(lengths, lengths) - pos  # tokens from here to the sentence end, inclusive
    vocab = int(ids.max()) + 1 if total else 1
    result = []
    gram = ids
    n_ids = vocab
    for k in range(1, n + 1):
        if k > 1:
            # n-grams that start at i: prefix (k-1)-gram at i plus the token at i+k-1. Positions whose
            # n-gram would cross a sentence end get a meaningless id and are masked out below.
            gram = gram[: total - k + 1] * vocab + ids[k - 1 :]
            gram, _ = pd.factorize(gram) if len(gram) else (gram, None)
            gram = gram.astype(np.int64)
            n_ids = int(gram.max()) + 1 if len(gram) else 1
            if hashes:
                rolling = rolling[: total - k + 1] * HASH_MULTIPLIER + tok_hash[k - 1 :]
        gram_hash = None
        if hashes:
            gram_hash = np.zeros(n_ids, dtype=np.uint64)
            gram_hash[gram] = rolling + np.uint64(k)  # the order is mixed in: "a" and "a a" differ anyway
        valid = left[: len(gram)] >= k
        key = seg[: len(gram)][valid] * n_ids + gram[valid]
        uniq, cnt = np.unique(key, return_counts=True)
        result.append(Counts(uniq // n_ids, uniq % n_ids, cnt.astype(np.int64), n_ids, gram_hash))
    return result


def lookup(keys_sorted, values, queries, default=0):
    """values[j] where keys_sorted[j] == query, else default (keys unique and sorted)."""
    if len(keys_sorted) == 0:
        return np.full(len(queries), default, dtype=values.dtype)
    idx = np.searchsorted(keys_sorted, queries)
    idx_clipped = np.minimum(idx, len(keys_sorted) - 1)
    found = keys_sorted[idx_clipped] == queries
    return np.where(found, values[idx_clipped], default)
