"""The stacked kind's `feature_precision`: `auto` (the default: bfloat16 products where the CPU has
them, else float32), float32, and int8 sentence vectors (ONNX Runtime) for the fastest scoring,
kept apart in the memo, in the next-utterance heads and in a saved model where they differ."""

import hashlib
import json

import numpy as np
import pytest

from scoring.adem.encoders import minilm
from scoring.adem.encoders.minilm import BASE_ID
from scoring.learned import crossfit, stacked
from scoring.learned.data import Response
from scoring.learned.reference_free import DEFAULT_PRECISION, next_utterance, semantic
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
    with pytest.raises(ValueError, match="feature_precision must be one of auto, float32, int8, not 'fp16'"):
        crossfit.checked_config("stacked", {"feature_precision": "fp16"})
    with pytest.raises(ValueError, match="feature_precision"):
        semantic.vectors(["hello"], precision="fp16")


def _saved_loaded_and_scored(final, tmp_path, precision):
    """(the model saved and loaded again, its scores of FRESH): the precision and scores survive."""
    final.save(tmp_path / f"{precision}.ckpt")
    loaded = stacked.load(tmp_path / f"{precision}.ckpt")
    assert loaded.config["feature_precision"] == precision
    scores = loaded.predict(FRESH)
    np.testing.assert_allclose(scores, final.predict(FRESH), rtol=0, atol=1e-9)
    return loaded, scores


def test_a_stacked_model_on_int8_vectors_fits_saves_and_scores_with_them(tmp_path, watched):
    final, results = crossfit.cross_validate(
        "stacked", _topical_set(), folds=4, seed=0, config={"feature_precision": "int8"}
    )
    assert results["test"]["spearman"] > 0.5
    assert results["config"]["feature_precision"] == "int8"
    assert set(watched["vectors"]) == {"int8"} and set(watched["heads"]) == {"int8"}
    loaded, scores = _saved_loaded_and_scored(final, tmp_path, "int8")
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


@pytest.fixture
def native_bfloat16(monkeypatch):
    """`auto` as it runs on a CPU that multiplies bfloat16 natively, whatever CPU runs the test
    (elsewhere torch emulates bfloat16: slower, the same arithmetic)."""
    monkeypatch.setattr(minilm, "native_bfloat16", lambda device: True)
    monkeypatch.setattr(semantic, "_ENCODERS", {})
    semantic.forget()
    yield
    semantic.forget()


def test_auto_is_the_default_and_runs_as_the_cpu_allows():
    assert DEFAULT_PRECISION == "auto" and stacked.Stacked({}).config["feature_precision"] == "auto"
    ran_as = semantic.encoder("auto").precision
    assert ran_as == ("bfloat16" if minilm.native_bfloat16("cpu") else "float32")
    assert semantic.encoder("auto").id == semantic.encoder("float32").id == BASE_ID


def test_auto_bfloat16_vectors_are_near_float32_s_kept_apart_from_them_and_barely_move_with_their_batch(
    native_bfloat16,
):
    texts = [
        "I love walking by the sea in winter.",
        "Which film shall we watch tonight?",
        "My sister just adopted two very loud parrots and they never stop talking.",
    ]
    assert semantic.encoder("auto").precision == "bfloat16"
    standard = semantic.vectors(texts, precision="auto")
    float32 = semantic.vectors(texts, precision="float32")  # asked second: not the memo's bfloat16 ones
    np.testing.assert_allclose(float32, semantic.encoder("float32").encode_texts(texts), rtol=0, atol=1e-6)
    cosines = np.sum(standard * float32, axis=1)
    assert (cosines > 0.9999).all() and not np.allclose(standard, float32, rtol=0, atol=1e-6), cosines
    # Encoded alone, without the others' padding, a text's bfloat16 vector moves by float rounding
    # carried through bfloat16 activations: far less than int8's batch effect (~0.05 cosine).
    alone = np.stack([semantic.encoder("auto").encode_texts([t])[0] for t in texts])
    assert (np.sum(alone * standard, axis=1) > 0.99995).all()


def test_auto_reads_float32_s_heads_trained_on_float32_vectors(tmp_path):
    assert next_utterance.training_precision("auto") == "float32"
    assert next_utterance.training_precision("float32") == "float32"
    assert next_utterance.training_precision("int8") == "int8"
    assert next_utterance.cache_path(tmp_path, TINY, "auto") == next_utterance.cache_path(tmp_path, TINY, "float32")


def test_a_model_on_auto_vectors_fits_saves_and_scores_with_them(tmp_path, watched, native_bfloat16):
    final, results = crossfit.cross_validate("stacked", _topical_set(), folds=4, seed=0)
    assert results["config"]["feature_precision"] == "auto" and results["test"]["spearman"] > 0.5
    assert set(watched["vectors"]) == {"auto"} and set(watched["heads"]) == {"auto"}
    loaded, scores = _saved_loaded_and_scored(final, tmp_path, "auto")
    # Read with float32 vectors, the same weights score within float rounding of bfloat16's effect.
    loaded.config["feature_precision"] = "float32"
    np.testing.assert_allclose(loaded.predict(FRESH), scores, rtol=0, atol=0.05)
