"""CIDEr as pycocoevalcap's Cider (the one nlg-eval runs), vectorised over a batch.

Per n-gram order 1..4: tf-idf vectors with idf = log(N) - log(max(1, df)), where df counts the
*items* (response + its references) of the corpus whose references contain the n-gram and N is the
number of items; similarity = sum over the response's n-grams of min(w_hyp, w_ref) * w_ref divided
by both norms, times a Gaussian length penalty exp(-delta^2 / (2 sigma^2)) with sigma 6, where
(faithfully to pycocoevalcap) the "length" is the number of *bigrams*. The score averages the four
orders, averages over the references and multiplies by 10. Tokens: `str.split()`.

The corpus matters: idf comes from it. RateLab's corpus is the dataset being scored - every
response of the dataset is one item with its context's references - exactly what
`Cider().compute_score` gives when handed the whole dataset. Chunks of a dataset get a
`CiderCorpus` built from the whole dataset, so chunking does not change the scores.
"""

import math
from dataclasses import dataclass

import numpy as np

from scoring.metrics.ngrams import count_texts, distinct, lookup
from scoring.metrics.registry import Metric, describe_family, register

ORDERS = 4
SIGMA = 6.0


@dataclass
class CiderCorpus:
    """Document frequencies of a corpus: per order, the n-gram hashes (sorted) and their df.

    The hashes are this process's (`ngrams.token_hashes`): a corpus is looked up by the process
    that built it and the processes forked from it, and is never stored.
    """

    n_items: int
    hashes: list
    df: list

    def __post_init__(self):
        order = [np.argsort(h) for h in self.hashes]
        self.hashes = [h[o] for h, o in zip(self.hashes, order, strict=True)]
        self.df = [d[o] for d, o in zip(self.df, order, strict=True)]

    def document_frequencies(self, k, hashes):
        """The df of order-`k` (0-based) n-grams with these hashes; 0 for those no reference holds.

        A binary search of the sorted hashes, the queries taken in sorted order (`ngrams.lookup`):
        50,000 trigrams in a table of 90,000 cost 2.2 ms (pandas' hash table, used before, 1.2 ms,
        but pandas costs a fresh command 0.2-0.3 s to import).
        """
        return lookup(self.hashes[k], self.df[k], hashes, default=0)

    @classmethod
    def from_refs(cls, refs, weights=None):
        """`refs[i]`: the references of item i; `weights[i]`: how many items share them (default 1).

        A dataset passes one entry per context with the number of its responses as the weight.
        """
        weights = np.ones(len(refs), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
        n_refs = [len(rs) for rs in refs]
        item_of_ref = np.repeat(np.arange(len(refs)), n_refs)
        one_each = max(n_refs, default=0) <= 1  # then an item's (reference, n-gram) rows are distinct
        hashes, dfs = [], []
        for c in count_texts([r for rs in refs for r in rs], ORDERS, hashes=True)[0]:
            if one_each:
                df = np.bincount(c.gram, weights=weights[item_of_ref[c.seg]], minlength=c.n_grams)
            else:
                # a hash table (ngrams.distinct): numpy's np.unique degrades badly on these structured keys
                item_gram = distinct(item_of_ref[c.seg] * c.n_grams + c.gram)
                df = np.bincount(item_gram % c.n_grams, weights=weights[item_gram // c.n_grams], minlength=c.n_grams)
            present = df > 0
            hashes.append(c.hashes[present])
            dfs.append(df[present])
        return cls(int(weights.sum()), hashes, dfs)


def cider(hyps, refs, corpus=None, sigma=SIGMA):
    """CIDEr of each response; `corpus` None means the batch itself is the corpus."""
    n = len(hyps)
    if n == 0:
        return np.zeros(0)
    n_refs = np.array([len(rs) for rs in refs], dtype=np.int64)
    ref_pair = np.repeat(np.arange(n), n_refs)
    counts, lengths = count_texts(list(hyps) + [r for rs in refs for r in rs], ORDERS, hashes=corpus is not None)
    n_refs_total = len(lengths) - n
    n_items = n if corpus is None else corpus.n_items
    log_n = np.log(float(n_items))
    # pycocoevalcap's length is the bigram count
    hyp_len = np.maximum(0, lengths[:n] - 1)
    ref_len = np.maximum(0, lengths[n:] - 1)
    delta = (hyp_len[ref_pair] - ref_len).astype(float)
    penalty = np.e ** (-(delta**2) / (2 * sigma**2))
    total = np.zeros((ORDERS, n_refs_total))
    for k, c in enumerate(counts):
        is_hyp = c.seg < n
        rrow = ~is_hyp
        rseg = c.seg[rrow] - n
        rgram = c.gram[rrow]
        if corpus is None:
            item_gram = distinct(ref_pair[rseg] * c.n_grams + rgram)
            df = np.bincount(item_gram % c.n_grams, minlength=c.n_grams).astype(float)
        else:
            df = corpus.document_frequencies(k, c.hashes).astype(float)
        weight = log_n - np.log(np.maximum(1.0, df))
        hseg, hgram = c.seg[is_hyp], c.gram[is_hyp]
        vh = c.count[is_hyp] * weight[hgram]
        vr = c.count[rrow] * weight[rgram]
        norm_h = np.sqrt(np.bincount(hseg, weights=vh**2, minlength=n))
        norm_r = np.sqrt(np.bincount(rseg, weights=vr**2, minlength=n_refs_total))
        vh_at_ref = lookup(hseg * c.n_grams + hgram, vh, ref_pair[rseg] * c.n_grams + rgram, default=0.0)
        dot = np.bincount(rseg, weights=np.minimum(vh_at_ref, vr) * vr, minlength=n_refs_total)
        denom = norm_h[ref_pair] * norm_r
        val = np.where(denom != 0, dot / np.where(denom != 0, denom, 1.0), dot)
        total[k] = val * penalty
    per_pair = np.zeros((ORDERS, n))
    for k in range(ORDERS):
        per_pair[k] = np.bincount(ref_pair, weights=total[k], minlength=n)
    return per_pair.mean(axis=0) / n_refs * 10.0


def _family(batch, names):
    return {"cider": cider(batch.hyps, batch.refs, batch.corpus)}


register(
    Metric(
        "cider",
        "1",
        _family,
        {"n": ORDERS, "sigma": SIGMA, "corpus": "the dataset being scored (one item per response)"},
        "CIDEr (pycocoevalcap Cider as used by nlg-eval); idf from the dataset being scored.",
        # the dataset's document frequencies are built before the fork and shared (compute_metrics)
        forks_cheaply=True,
    )
)
describe_family(_family, "CIDEr")
assert math.isclose(SIGMA, 6.0)
