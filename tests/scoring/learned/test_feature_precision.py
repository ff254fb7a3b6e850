"""The stacked kind's `feature_precision`: int8 sentence vectors (ONNX Runtime) for faster scoring,
kept apart from float32 ones in the memo, in the next-utterance heads and in a saved model."""

import hashlib
import json

import numpy as np
import pytest

from scoring.adem.encoders.minilm import BASE_ID
from scoring.learned import crossfit, stacked
from scoring.learned.data import Response
from scoring.learned.reference_free import next_utterance, semantic
from tests.scoring.learned.test_reference_free import TINY, _topical_set

FRESH = [
    Response(context=("Hi.", "I baked fresh bread this morning."), response="What flour is in the bread?"),
    Response(context=("Hi.", "I baked fresh bread this morning."), response="Tokyo is busy in spring."),
]


@pytest.fixture
def watched(monkeypatch):
    """Records the precision of every encoding and every heads lookup (heads: conftest's small ones)."""
    asked = {"vectors": [], "heads": []}
    real_vectors, real_heads = semantic.vectors, next_utterance.heads

    def vectors(texts, *, encode=None, precision="float32"):
        asked["vectors"].append(precision)
        return real_vectors(texts, encode=encode, precision=precision)

    def heads(directory=None, *, settings=None, precision="float32"):
        asked["heads"].append(precision)
        return real_heads(directory, settings=settings, precision=precision)

    monkeypatch.setattr(semantic, "vectors", vectors)
    monkeypatch.setattr(next_utterance, "heads", heads)
    semantic.forget()
    yield asked
    semantic.forget()


def test_int8_and_float32_vectors_of_a_text_are_kept_apart():
    semantic.forget()
    texts = ["I love walking by the sea in winter.", "Which film shall we watch tonight?"]
    int8 = semantic.vectors(texts, precision="int8")
    float32 = semantic.vectors(texts)  # asked second: the memo must not hand back the int8 vectors
    np.testing.assert_allclose(float32, semantic.encoder().encode_texts(texts), rtol=0, atol=1e-5)
    cosines = np.sum(int8 * float32, axis=1)
    assert (cosines > 0.95).all() and (cosines < 0.99999).all(), cosines
    assert semantic.encoder("int8").id != semantic.encoder().id
    semantic.forget()


def test_each_precision_has_its_own_heads_file_and_float32_keeps_the_name_it_had(tmp_path):
    float32 = next_utterance.cache_path(tmp_path, TINY)
    # The name the float32 file had before precisions existed, so a machine's trained heads stay valid.
    key = json.dumps({**TINY, "encoder": BASE_ID}, sort_keys=True)
    assert float32.name == f"next-utterance-{hashlib.sha256(key.encode()).hexdigest()[:16]}.ckpt"
    assert next_utterance.cache_path(tmp_path, TINY, "int8") != float32


def test_an_unknown_precision_is_refused_by_name():
    with pytest.raises(ValueError, match="feature_precision must be one of float32, int8, not 'fp16'"):
        crossfit.checked_config("stacked", {"feature_precision": "fp16"})
    with pytest.raises(ValueError, match="feature_precision"):
        semantic.vectors(["hello"], precision="fp16")


def test_a_stacked_model_on_int8_vectors_fits_saves_and_scores_with_them(tmp_path, watched):
    final, results = crossfit.cross_validate(
        "stacked", _topical_set(), folds=4, seed=0, config={"feature_precision": "int8"}
    )
    assert results["test"]["spearman"] > 0.5
    assert results["config"]["feature_precision"] == "int8"
    assert set(watched["vectors"]) == {"int8"} and set(watched["heads"]) == {"int8"}
    final.save(tmp_path / "int8.ckpt")
    loaded = stacked.load(tmp_path / "int8.ckpt")
    assert loaded.config["feature_precision"] == "int8"
    scores = loaded.predict(FRESH)
    np.testing.assert_allclose(scores, final.predict(FRESH), rtol=0, atol=1e-9)
    assert scores[0] > scores[1]
    assert set(watched["vectors"]) == {"int8"}  # scoring, too, read int8 vectors only
    # The precision is part of the model: the same weights read float32 vectors score otherwise.
    loaded.config["feature_precision"] = "float32"
    assert not np.allclose(loaded.predict(FRESH), scores, rtol=0, atol=1e-6)


def test_a_model_saved_before_precisions_existed_scores_with_float32_vectors(tmp_path, watched):
    model = stacked.Stacked({})
    model.fit(_topical_set(contexts=12), _topical_set(contexts=6, seed=1), seed=0)
    del model.config["feature_precision"]  # what such a checkpoint's config holds
    model.save(tmp_path / "old.ckpt")
    watched["vectors"].clear()
    loaded = stacked.load(tmp_path / "old.ckpt")
    assert loaded.config["feature_precision"] == "float32"
    loaded.predict(FRESH)
    assert set(watched["vectors"]) == {"float32"}
