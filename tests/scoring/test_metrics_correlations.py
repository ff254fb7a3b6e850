"""The published turn-level correlations (Yeh et al. 2021) reproduced on ../shared/data.

BLEU-4, METEOR and ROUGE-L the nlg-eval way (whitespace tokens, one reference, sentence level,
ground-truth responses excluded) against the mean human score per response; Pearson and Spearman
must match /work/shared/data/README.md within 0.005. Pure: the loaders' records, no database.
"""

import shutil

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

import scoring.metrics as engine
from tests.shared_loaders import grade, usr_personachat

PUBLISHED = {  # metric: {set: (pearson, spearman)}
    "bleu4": {"usr": (0.135, 0.090), "dailydialog": (0.075, 0.184), "empatheticdialogues": (-0.051, 0.002)},
    "meteor": {"usr": (0.253, 0.271), "dailydialog": (0.096, 0.010), "empatheticdialogues": (0.118, 0.055)},
    "rouge_l": {"usr": (0.066, 0.038), "dailydialog": (0.154, 0.147), "empatheticdialogues": (0.029, -0.013)},
}


def load(shared_data, name):
    if name == "usr":
        return usr_personachat(shared_data, include_ground_truth=False)
    return grade(shared_data, name)


def human_and_texts(dataset, ratings):
    by_response = {}
    for rating in ratings:
        by_response.setdefault((rating["context_id"], rating["system"]), []).append(rating["score"])
    hyps, refs, human = [], [], []
    for record in dataset:
        for response in record["responses"]:
            hyps.append(response["text"])
            refs.append(record["references"])
            human.append(np.mean(by_response[(record["context_id"], response["system"])]))
    return hyps, refs, np.array(human)


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["usr", "dailydialog", "empatheticdialogues"])
@pytest.mark.parametrize("metric", ["bleu4", "rouge_l", "meteor"])
def test_turn_level_correlation_matches_published(shared_data, corpus, metric):
    if metric == "meteor" and shutil.which("java") is None:
        pytest.skip("METEOR 1.5 needs Java")
    hyps, refs, human = human_and_texts(*load(shared_data, corpus))
    assert len(hyps) == (240 if corpus == "usr" else 300)
    scores = np.array(engine.score(hyps, refs, [metric])[metric], dtype=float)
    pearson, spearman = pearsonr(scores, human)[0], spearmanr(scores, human)[0]
    published_pearson, published_spearman = PUBLISHED[metric][corpus]
    assert pearson == pytest.approx(published_pearson, abs=0.005)
    assert spearman == pytest.approx(published_spearman, abs=0.005)
