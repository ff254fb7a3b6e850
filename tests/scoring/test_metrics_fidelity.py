"""Equality with pycocoevalcap's own scorers on thousands of random pairs (no database).

Random texts mix several references per response, empty responses, repeated and long texts,
non-ASCII words, emoji and punctuation.
"""

import shutil

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.bleu.bleu_scorer import cook_refs, cook_test
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge

import scoring.metrics as engine
from scoring.metrics import bleu, meteor, rouge
from scoring.metrics.cider import CiderCorpus, cider
from scoring.metrics.ngrams import tokenize_many
from tests.scoring.metric_text import random_pairs

N = 3000


def as_coco(hyps, refs):
    return {i: refs[i] for i in range(len(hyps))}, {i: [hyps[i]] for i in range(len(hyps))}


@pytest.fixture(scope="module")
def pairs():
    return random_pairs(N, seed=20261122)


def test_sentence_bleu_equals_pycocoevalcap(pairs):
    hyps, refs = pairs
    corpus_theirs, theirs = Bleu(4).compute_score(*as_coco(hyps, refs), verbose=0)
    mine = bleu.sentence_bleu(hyps, refs)
    assert np.abs(np.array(theirs) - mine).max() < 1e-9
    assert bleu.corpus_bleu(hyps, refs) == pytest.approx(corpus_theirs, abs=1e-12)


def test_sentence_bleu_equals_pycocoevalcap_called_pair_by_pair(pairs):
    # nlg-eval scores a file at once; one pair at a time must give the same (one reference each)
    hyps, refs = pairs
    mine = bleu.sentence_bleu(hyps[:300], [r[:1] for r in refs[:300]])
    for i in range(300):
        _, theirs = Bleu(4).compute_score({0: refs[i][:1]}, {0: [hyps[i]]}, verbose=0)
        assert np.abs(np.array(theirs)[:, 0] - mine[:, i]).max() < 1e-9


def coco_counts(hyps, refs):
    """pycocoevalcap's own BLEU statistics per response: testlen, closest reflen, correct[k], guess[k]."""
    cooked = [cook_test(h, cook_refs(rs), eff="closest") for h, rs in zip(hyps, refs, strict=True)]
    return [[c[key] for c in cooked] for key in ("testlen", "reflen", "correct", "guess")]


def assert_bleu_counts_equal(hyps, refs):
    testlen, reflen, matches, guesses = bleu.bleu_stats(hyps, refs)
    theirs = coco_counts(hyps, refs)
    mine = [testlen.tolist(), reflen.tolist(), matches.T.tolist(), guesses.T.tolist()]
    assert mine == theirs  # integer counts (floats holding integers): exactly equal


EDGE_PAIRS = [
    ("", [""]),
    ("a", [""]),
    ("", ["a b"]),
    ("   ", ["a", "  b  "]),
    ("a a a a", ["a a", "a a a"]),  # clipped to the reference holding the most
    ("a b a b a b", ["b a b", "a b a b", "a"]),
    ("über café 😀 über café", ["café über", "über café 😀 😀"]),
    ("x y z w v", ["x y z w v"] * 5),  # five references: three tag bits
]


def test_bleu_counts_equal_pycocoevalcap_exactly(pairs):
    hyps, refs = pairs
    edge_hyps, edge_refs = [h for h, _ in EDGE_PAIRS], [rs for _, rs in EDGE_PAIRS]
    # multi-reference and single-reference pairs in one batch, then one reference each
    assert_bleu_counts_equal(edge_hyps + hyps, edge_refs + refs)
    assert_bleu_counts_equal(hyps, [r[:1] for r in refs])


def test_bleu_counts_of_only_empty_texts_are_zero():
    assert_bleu_counts_equal(["", " "], [[""], ["  ", ""]])
    assert bleu.sentence_bleu([], []).shape == (4, 0)


def test_bleu_pair_with_too_many_distinct_tokens_takes_the_hashing_route(pairs, monkeypatch):
    hyps, refs = pairs
    # 9000 distinct tokens shared by a response and its reference: more than the 13 bits a token
    # that 4 tokens per key leave beside 41 pairs and 3 references
    words = [f"t{i}" for i in range(9000)]
    huge = " ".join(words)
    hyps = [*hyps[:20], huge, *hyps[20:40]]
    refs = [*refs[:20], [" ".join(words[::-1]), "t5 t6 t7 t8 t9"], *refs[20:40]]
    routed = []
    factorized = bleu._factorized_matches

    def spy(sub_hyps, sub_refs, n):
        routed.append(list(sub_hyps))
        return factorized(sub_hyps, sub_refs, n)

    monkeypatch.setattr(bleu, "_factorized_matches", spy)
    assert_bleu_counts_equal(hyps, refs)
    assert routed == [[huge]]


@pytest.mark.parametrize("key_bits", [40, 24, 16, 8])
def test_bleu_counts_stay_exact_when_keys_have_fewer_bits(pairs, monkeypatch, key_bits):
    # narrower keys push pairs, then whole batches, onto the fallbacks: argsort instead of a packed
    # sort, the hashing route for pairs with many distinct tokens, and for all when nothing fits
    hyps, refs = pairs
    edge_hyps, edge_refs = [h for h, _ in EDGE_PAIRS], [rs for _, rs in EDGE_PAIRS]
    monkeypatch.setattr(bleu, "KEY_BITS", key_bits)
    assert_bleu_counts_equal(edge_hyps + hyps[:300], edge_refs + refs[:300])


def test_argsort_keys_is_a_stable_argsort_with_and_without_room_for_positions(monkeypatch):
    keys = np.random.default_rng(3).integers(0, 50, 1000)
    for key_bits in (63, 12):  # 6 key bits + 10 position bits fit in 63, not in 12
        monkeypatch.setattr(bleu, "KEY_BITS", key_bits)
        order, sorted_keys = bleu._argsort_keys(keys, 6)
        assert order.tolist() == np.argsort(keys, kind="stable").tolist()
        assert sorted_keys.tolist() == np.sort(keys).tolist()


def test_rouge_l_equals_pycocoevalcap(pairs):
    hyps, refs = pairs
    _, theirs = Rouge().compute_score(*as_coco(hyps, refs))
    assert np.abs(theirs - rouge.rouge_l(hyps, refs)).max() < 1e-9


def lcs_by_python_integers(hyps, refs):
    """LCS lengths of every (response, reference) pair, by the route for references past 63 tokens."""
    ids, lengths, _ = tokenize_many(list(hyps) + [r for rs in refs for r in rs], sep=" ")
    starts = np.cumsum(lengths) - lengths
    ref_pair = np.repeat(np.arange(len(hyps)), [len(rs) for rs in refs])
    a = (starts[ref_pair], lengths[ref_pair])
    b = (starts[len(hyps) :], lengths[len(hyps) :])
    expected = [
        rouge._lcs_bigint(ids[a[0][i] : a[0][i] + a[1][i]].tolist(), ids[b[0][i] : b[0][i] + b[1][i]].tolist())
        for i in range(len(ref_pair))
    ]
    return ids, a, b, expected


@pytest.mark.parametrize("key_bits", [63, 24, 18, 8])
def test_rouge_l_lcs_stays_exact_when_keys_have_fewer_bits(pairs, monkeypatch, key_bits):
    # token ids and positions take 15 bits here: narrower keys split the pairs into batches of 512,
    # then of 8, and at 8 bits, where not one pair fits, send every pair to the Python-integer route
    hyps, refs = pairs
    ids, a, b, expected = lcs_by_python_integers(hyps[:400], refs[:400])
    monkeypatch.setattr(rouge, "KEY_BITS", key_bits)
    assert rouge.lcs_lengths(ids, a, b).tolist() == expected


def test_rouge_l_lcs_of_repeated_tokens_empty_texts_and_long_responses():
    hyps = ["a a b a", "", "x", "b " * 70 + "a", "a b c", " ", "a  b"]
    refs = [["a b a a"], ["a"], [""], ["a b a b"], ["c b a", "a x b y c"], [" "], ["a b"]]
    ids, a, b, expected = lcs_by_python_integers(hyps, refs)
    assert rouge.lcs_lengths(ids, a, b).tolist() == expected


def test_cider_equals_pycocoevalcap_on_the_whole_set_and_in_chunks(pairs):
    hyps, refs = pairs
    # pycocoevalcap's CIDEr asserts that no n-gram is in more items than there are: non-empty refs
    _, theirs = Cider().compute_score(*as_coco(hyps, refs))
    assert np.abs(theirs - cider(hyps, refs)).max() < 1e-9
    corpus = CiderCorpus.from_refs(refs)
    chunked = np.concatenate([cider(hyps[i : i + 700], refs[i : i + 700], corpus) for i in range(0, N, 700)])
    assert np.abs(theirs - chunked).max() < 1e-9


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java (apt-get install default-jre-headless)")
def test_meteor_equals_pycocoevalcap_within_printed_precision(pairs):
    hyps, refs = pairs
    hyps, refs = hyps[:2000], refs[:2000]
    theirs_scorer = Meteor()
    try:
        _, theirs = theirs_scorer.compute_score(*as_coco(hyps, refs))
    finally:
        del theirs_scorer
    mine = meteor.scorer().score(hyps, refs)
    # both print Java doubles in full; the same jar gives the same digits
    assert np.abs(np.array(theirs) - np.array(mine)).max() < 1e-9


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="METEOR 1.5 needs Java (apt-get install default-jre-headless)")
def test_every_engine_metric_scores_alone_exactly_as_beside_all_the_others(pairs):
    # A run computes only the metrics that are missing or out of date (services.metrics_compute), so
    # a metric's scores must not depend on which others are computed with it: no shared state
    # (tokens, vectors, CIDEr's document frequencies) may leak from one metric into another.
    hyps, refs = pairs[0][:40], pairs[1][:40]
    corpus = CiderCorpus.from_refs(refs)
    names = [metric.name for metric in engine.all_metrics()]
    together = engine.score(hyps, refs, names, corpus=corpus)
    for name in names:
        alone = engine.score(hyps, refs, [name], corpus=corpus)[name]
        assert np.array_equal(np.array(alone, dtype=float), np.array(together[name], dtype=float), equal_nan=True), name
