"""Vectorised n-gram counting over a whole batch of sentences.

Every token of every sentence is mapped to an integer id (Arrow's dictionary encoding), n-grams of
order k get ids by pairing the id of their (k-1)-gram prefix with the id of their last token, and
counts per (sentence, n-gram) come from one sort. BLEU and CIDEr are then array arithmetic.

No pandas: Arrow's and NumPy's kernels do what it did (factorising, distinct values), and data goes
in and out of Arrow through buffers, because `pyarrow.array()` of a list and `Array.to_numpy()`
import pandas (0.2-0.3 s of every fresh command; docs/metrics.md, "Start-up") to ask whether
their argument is a pandas object.
"""

import importlib
from dataclasses import dataclass
from functools import cache

import numpy as np

from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
pa = lazy_module("pyarrow")

# Arrow's string arrays address their bytes with 32-bit offsets; larger batches are split in Python.
MAX_ARROW_BYTES = 2**31 - 1


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
    # a 64-bit hash of each n-gram id's tokens (only with `hashes=True`), so n-grams can be matched
    # against statistics gathered from other batches in this process (CIDEr's corpus document
    # frequencies); see `token_hashes` for why only in this process
    hashes: np.ndarray | None = None


def tokenize_many(texts, sep=None):
    """Token ids of many texts at once: `(ids, lengths, tokens)` with `text.split(sep)` semantics.

    Arrow splits and dictionary-encodes the texts in C++ without making a Python string per token,
    which was half the time BLEU and ROUGE-L spent on a chunk (a `str.split` over the joined texts,
    then a factorisation of the token objects). Its whitespace is Python's (checked for every
    code point in tests/scoring/test_metrics_engine.py), but where `str.split()` drops the empty
    strings that leading or trailing whitespace and empty texts make, Arrow keeps them: they are
    removed here. `tokens` holds each id's token, in id order: an Arrow string array (the callers
    that need the strings ask `token_strings`). Texts Arrow cannot take (lone surrogates, which have
    no UTF-8, or more than 2 GB of text) are split in Python.
    """
    n = len(texts)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    array = _string_array(texts)
    if array is None:
        return _tokenize_python(texts, sep)
    pool, pc = _pool(), _compute()
    if sep is None:
        lists = pc.utf8_split_whitespace(array, memory_pool=pool)
    else:
        lists = pc.split_pattern(array, pattern=sep, memory_pool=pool)
    lengths = np.diff(_offsets(lists)).astype(np.int64)
    encoded = pc.dictionary_encode(pc.list_flatten(lists, memory_pool=pool), memory_pool=pool)
    ids = _values(encoded.indices, np.int32).astype(np.int64)
    tokens = encoded.dictionary
    if sep is None:
        empty = np.flatnonzero(np.diff(_offsets(tokens)) == 0)
        if len(empty):
            dropped = ids == empty[0]
            owner = np.repeat(np.arange(n, dtype=np.int64), lengths)[dropped]
            lengths = lengths - np.bincount(owner, minlength=n)
            ids = ids[~dropped]
    return ids, lengths, tokens


def _string_array(texts):
    """The texts as an Arrow string array, built from their UTF-8 bytes (pa.array() of the list would
    import pandas); None where they have no UTF-8 (lone surrogates) or more bytes than it holds."""
    try:
        encoded = [text.encode() for text in texts]
    except UnicodeEncodeError:
        return None
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    if offsets[-1] > MAX_ARROW_BYTES:
        return None
    return pa.StringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))
    )


def _offsets(array):
    """The n + 1 offsets of an Arrow string or list array of n items (slices included)."""
    return np.frombuffer(array.buffers()[1], np.int32, len(array) + 1, array.offset * np.int32().itemsize)


def _values(array, dtype):
    """A NumPy view of a primitive Arrow array of `dtype` without nulls (what `to_numpy()` gives,
    without pandas)."""
    dtype = np.dtype(dtype)
    if array.null_count or array.type.bit_width != dtype.itemsize * 8:
        raise TypeError(f"expected {dtype} values without nulls, not {array.type} with {array.null_count} nulls")
    return np.frombuffer(array.buffers()[1], dtype, len(array), array.offset * dtype.itemsize)


def _int64_array(values):
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(np.ascontiguousarray(values, np.int64))])


def factorize(values):
    """Ids 0, 1, ... of int64 values, numbered in order of first appearance (Arrow's dictionary
    encoding, a hash table: NumPy's `unique` sorts, which is slower and numbers by value)."""
    if not len(values):
        return np.zeros(0, np.int64)
    encoded = _compute().dictionary_encode(_int64_array(values), memory_pool=_pool())
    return _values(encoded.indices, np.int32).astype(np.int64)


def distinct(values):
    """The distinct int64 values, in order of first appearance."""
    if not len(values):
        return np.zeros(0, np.int64)
    return _values(_compute().unique(_int64_array(values), memory_pool=_pool()), np.int64).copy()


def token_strings(tokens):
    """The tokens `tokenize_many` returned, as a list of str."""
    return tokens if isinstance(tokens, list) else tokens.to_pylist()


def token_hashes(tokens):
    """A 64-bit hash of each token: Python's own string hash (SipHash), salted per interpreter, so
    equal in this process and the processes forked from it, and nowhere else. A run's CIDEr
    document frequencies are built and looked up in one process or its forks (each Celery worker
    process builds its own: scoring/services/metrics/chunks.py), and are never stored."""
    strings = token_strings(tokens)
    return np.fromiter(map(hash, strings), np.int64, len(strings)).view(np.uint64)


def _tokenize_python(texts, sep):
    """`tokenize_many` for texts Arrow cannot take: `str.split` and a dictionary of tokens."""
    split = [text.split(sep) for text in texts]
    numbering = {}
    ids = [numbering.setdefault(token, len(numbering)) for tokens in split for token in tokens]
    lengths = np.fromiter(map(len, split), np.int64, len(split))
    return np.asarray(ids, dtype=np.int64), lengths, list(numbering)


HASH_MULTIPLIER = np.uint64(0x100000001B3)  # FNV prime: spreads the rolling hash over 64 bits


def count_texts(texts, n=4, *, hashes=False):
    """Counts of orders 1..n of `text.split()` for each text (tokenised in one pass: tokenize_many),
    and each text's length in tokens; `hashes=True` adds each n-gram's hash."""
    ids, lengths, tokens = tokenize_many(texts)
    tok_hash = None
    if hashes:
        tok_hash = token_hashes(tokens)[ids] if len(ids) else np.zeros(0, np.uint64)
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
            gram = factorize(gram[: total - k + 1] * vocab + ids[k - 1 :])
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
    """values[j] where keys_sorted[j] == query, else default (keys unique and sorted).

    The queries are searched in rising order: each search then starts where the last one ended
    (NumPy's binary search keeps its lower bound while the keys rise), which, sort included, costs
    a third of searching them as they come (50,000 in 90,000 keys: 2.2 ms against 7.1). Queries
    that already rise (a batch's own n-gram rows) are not sorted again.
    """
    if len(keys_sorted) == 0:
        return np.full(len(queries), default, dtype=values.dtype)
    if len(queries) < 2 or (queries[1:] >= queries[:-1]).all():
        idx = np.searchsorted(keys_sorted, queries)
    else:
        order = np.argsort(queries)
        idx = np.empty(len(queries), np.int64)
        idx[order] = np.searchsorted(keys_sorted, queries[order])
    idx_clipped = np.minimum(idx, len(keys_sorted) - 1)
    found = keys_sorted[idx_clipped] == queries
    return np.where(found, values[idx_clipped], default)
