"""Reference-free features: surface signals, MiniLM cosines, the next-utterance heads, and the
stacked kind learning from them (issue 41)."""

import numpy as np
import pytest

from scoring.adem import checkpoint
from scoring.adem.vhred.corpus import chitchat_dialogues
from scoring.learned import crossfit, determinism
from scoring.learned.data import Rated, Response
from scoring.learned.reference_free import next_utterance, semantic
from scoring.learned.reference_free.features import reference_free_features
from scoring.learned.reference_free.surface import surface_features

TINY = {"windows": 60, "negatives": 1, "seed": 3, "penalty": 1.0, "corpus": "chitchat-dataset"}


def test_surface_features_count_what_they_say():
    features = surface_features(("Do you like tea?", "I like green tea a lot"), "tea tea tea, I like tea")
    words = ["tea", "tea", "tea", "i", "like", "tea"]
    assert features["rf:log_words"] == pytest.approx(np.log1p(len(words)))
    assert features["rf:distinct_1"] == pytest.approx(3 / 6)  # tea, i, like
    assert features["rf:distinct_2"] == pytest.approx(4 / 5)  # (tea tea) twice
    assert features["rf:last_overlap_1"] == pytest.approx(6 / 6)  # every word is in the last turn
    assert features["rf:context_overlap_2"] == pytest.approx(2 / 5)  # "i like", "like tea"
    assert features["rf:asks_question"] == 0.0 and features["rf:answers_question"] == 0.0
    assert surface_features(("Why?",), "")["rf:empty"] == 1.0
    assert surface_features((), "Really?")["rf:asks_question"] == 1.0


def test_vectors_are_encoded_once_per_text_and_come_back_in_order():
    semantic.forget()
    asked = []

    def encode(texts):
        asked.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    first = semantic.vectors(["ab", "a", "ab"], encode=encode)
    second = semantic.vectors(["a", "abc"], encode=encode)
    assert asked == [["a", "ab"], ["abc"]]
    np.testing.assert_array_equal(first[:, 0], [2, 1, 2])
    np.testing.assert_array_equal(second[:, 0], [1, 3])
    semantic.forget()


@pytest.mark.parametrize("precision", ["float32", "auto"])
def test_encoding_many_texts_at_once_gives_each_texts_own_vector_in_order(precision):
    # The real encoder sorts the distinct texts by length and pads per batch; every text must
    # come back where it was asked for, as the vector it gets when encoded alone: to float
    # rounding in float32, to bfloat16's rounding where `auto` runs in it (another text's vector
    # would be far off: these texts' vectors are at most ~0.6 cosine apart).
    semantic.forget()
    texts = ["a long reply about the weather and the sea, " * 4, "ok", "what time is it?", "ok", "yes, at noon"]
    together = semantic.vectors(texts, precision=precision)
    alone = [semantic.encoder(precision).encode_texts([t])[0] for t in dict.fromkeys(texts)]
    by_text = dict(zip(dict.fromkeys(texts), alone, strict=True))
    expected = np.stack([by_text[t] for t in texts])
    if semantic.encoder(precision).precision == "float32":
        np.testing.assert_allclose(together, expected, rtol=0, atol=1e-5)
    else:
        assert (np.sum(together * expected, axis=1) > 0.9999).all()
    semantic.forget()


def test_a_context_longer_than_the_encoder_reads_keeps_its_end():
    # Past 128 word pieces the start is cut, never the latest turn a response answers.
    latest = "so which film shall we watch tonight?"
    short_start, long_start = "old talk " * 150, "new words then " + "old talk " * 200
    vectors = semantic.vectors([short_start + latest, long_start + latest, latest + " " + short_start])
    np.testing.assert_allclose(vectors[0], vectors[1], rtol=0, atol=1e-5)
    assert float(vectors[0] @ vectors[2]) < 0.99
    semantic.forget()


def test_the_feature_threads_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(determinism.THREADS_VARIABLE, raising=False)
    assert determinism.feature_threads() == 1
    monkeypatch.setenv(determinism.THREADS_VARIABLE, "2")
    assert determinism.feature_threads() == 2
    monkeypatch.setenv(determinism.THREADS_VARIABLE, "two")
    with pytest.raises(ValueError, match="whole number"):
        determinism.feature_threads()


def test_the_cosine_to_the_context_prefers_the_reply_that_answers_it():
    context = ("I just got back from a long hike in the mountains.",)
    replies = ["Wow, how high did you climb? Was the view from the summit good?", "My car needs new tyres."]
    features = reference_free_features([Response(context=context, response=r) for r in replies])
    assert features[0]["rf:cosine_last"] > features[1]["rf:cosine_last"] + 0.1
    assert features[0]["rf:cosine_context"] > features[1]["rf:cosine_context"]


def test_the_next_utterance_head_ranks_held_out_true_turns_above_random_ones():
    dialogues = chitchat_dialogues()
    heads = next_utterance.train_heads(dialogues[:3000], settings={**TINY, "windows": 400, "negatives": 2})
    held_out = next_utterance.sample_windows(dialogues[3000:], windows=120, seed=9)
    partners = next_utterance.negative_partners(len(held_out), negatives=1, seed=9)[0]
    true = [Response(context=tuple(c), response=r) for c, r in held_out]
    wrong = [Response(context=tuple(c), response=held_out[p][1]) for (c, _), p in zip(held_out, partners, strict=True)]
    scored = reference_free_features(true + wrong, heads=heads)
    for view in ("context", "last"):
        logits = np.array([f[f"rf:next_utterance_{view}"] for f in scored])
        wins = np.mean(logits[: len(true)] > logits[len(true) :])  # paired: same context, true vs other turn
        assert wins > 0.7, (view, wins)


def test_heads_are_cached_on_disk_and_a_damaged_cache_is_trained_again(tmp_path, monkeypatch):
    first = next_utterance.heads(tmp_path, settings=TINY)
    path = next_utterance.cache_path(tmp_path, TINY)
    assert path.is_file()
    next_utterance._LOADED.clear()

    def must_not_train(*args, **kwargs):
        raise AssertionError("the cached heads should have been read")

    monkeypatch.setattr(next_utterance, "train_heads", must_not_train)
    again = next_utterance.heads(tmp_path, settings=TINY)
    for view in next_utterance.VIEWS:
        np.testing.assert_array_equal(first[view][0], again[view][0])
        assert first[view][1] == again[view][1]
    path.write_bytes(path.read_bytes()[:-10])
    next_utterance._LOADED.clear()
    with pytest.raises(checkpoint.CheckpointError):
        next_utterance.load_heads(path)
    monkeypatch.undo()
    retrained = next_utterance.heads(tmp_path, settings=TINY)
    np.testing.assert_allclose(retrained["last"][0], first["last"][0])  # same seed, same heads
    next_utterance._LOADED.clear()


def _topical_set(contexts=24, seed=0):
    """Responses with no stored feature whose rating is whether they stay on their context's topic."""
    rng = np.random.default_rng(seed)
    topics = [
        ("I baked fresh bread this morning.", "The bread smells wonderful, what flour did you use?"),
        ("My dog learned a new trick today.", "What a clever dog! Which trick did the puppy learn?"),
        ("We are flying to Japan next week.", "Japan is lovely, will you visit Tokyo on your trip?"),
        ("I started learning the piano.", "Piano is great fun, which songs are you practising?"),
        ("The football match last night was exciting.", "That game was amazing, who scored the goals?"),
        ("I am repainting my kitchen walls.", "Nice, what colour paint did you pick for the kitchen?"),
    ]
    rows = []
    for c in range(contexts):
        turn, on_topic = topics[c % len(topics)]
        off_topic = topics[(c + 1 + int(rng.integers(len(topics) - 1))) % len(topics)][1]
        for k, (response, good) in enumerate(((on_topic, True), (off_topic, False), (on_topic + " Tell me!", True))):
            score = (4.0 if good else 2.0) + float(rng.normal(scale=0.4))
            rows.append(
                Rated(
                    context=(f"Hello number {c}.", turn),
                    response=response,
                    score=score,
                    context_id=f"c{c}",
                    system=f"s{k}",
                    response_id=c * 3 + k,
                )
            )
    return rows


def test_the_stacked_kind_learns_from_reference_free_features_alone():
    rated = _topical_set()
    with pytest.raises(ValueError, match="no feature that varies"):
        crossfit.cross_validate("stacked", rated, folds=4, seed=0, config={"reference_free": False})
    final, results = crossfit.cross_validate("stacked", rated, folds=4, seed=0)
    assert results["test"]["spearman"] > 0.5
    assert any(name.startswith("rf:") for name in final.weights())
    # Served the same way: a new response is scored from its texts alone.
    fresh = final.predict(
        [
            Response(context=("Hi.", "I baked fresh bread this morning."), response="What flour is in the bread?"),
            Response(context=("Hi.", "I baked fresh bread this morning."), response="Tokyo is busy in spring."),
        ]
    )
    assert fresh[0] > fresh[1]


@pytest.mark.parametrize("precision", ["float32", "auto"])
def test_stacked_figures_with_reference_free_features_repeat_to_the_third_decimal(precision):
    rated = _topical_set(seed=4)
    config = {"feature_precision": precision}
    _, first = crossfit.cross_validate("stacked", rated, folds=4, seed=1, refit=False, config=config)
    semantic.forget()  # the second run encodes everything again
    _, second = crossfit.cross_validate("stacked", rated, folds=4, seed=1, refit=False, config=config)
    for figure in ("pearson", "spearman"):
        assert round(first["test"][figure], 3) == round(second["test"][figure], 3)
    # Texts meet the encoder in other batches the second time (its memo was emptied). A batch's
    # padding moves float32 sums by ~1e-7: equal far below the third decimal. In bfloat16 (`auto`
    # on a CPU that has it) the rounding moves a score by a few thousandths of the 1-5 scale.
    tolerance = 1e-5 if semantic.encoder(precision).precision == "float32" else 0.01
    np.testing.assert_allclose(
        [p["predicted"] for p in first["predictions"]], [p["predicted"] for p in second["predictions"]], atol=tolerance
    )
