"""Equality with pycocoevalcap's own scorers on thousands of random pairs (no database).

Random texts mix several references per response, empty responses, repeated and long texts,
non-ASCII words, emoji and punctuation.
"""

import shutil

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.meteor.meteor import Meteor
from pycocoevalcap.rouge.rouge import Rouge

from scoring.metrics import bleu, meteor, rouge
from scoring.metrics.cider import CiderCorpus, cider
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


def test_rouge_l_equals_pycocoevalcap(pairs):
    hyps, refs = pairs
    _, theirs = Rouge().compute_score(*as_coco(hyps, refs))
    assert np.abs(theirs - rouge.rouge_l(hyps, refs)).max() < 1e-9


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
