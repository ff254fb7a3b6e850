"""Reference-free conversation metrics, each checked by hand on tiny conversations (no database)."""

import math

import pytest

from scoring.metrics.conversation import (
    ALL,
    coherence_pairs,
    conversation_metrics,
    distinct_n,
    self_repetition,
    simple_metrics,
)

# Tokens (lower-cased Treebank words) of the system's turns, by hand:
#   "Hello there!"          -> hello, there, !                 (3)
#   "Do you like cats?"     -> do, you, like, cats, ?          (5)
#   "I like cats a lot."    -> i, like, cats, a, lot, .        (6)
CHAT = [
    ("user", "Hi"),
    ("system", "Hello there!"),
    ("user", "I have a cat."),
    ("system", "Do you like cats?"),
    ("user", "Yes"),
    ("system", "I like cats a lot."),
]


def test_system_turns_and_mean_length_count_the_systems_turns_only():
    values = simple_metrics(CHAT)
    assert values["system_turns"] == 3
    assert values["mean_turn_length"] == pytest.approx((3 + 5 + 6) / 3)


def test_distinct_1_and_2_pool_the_systems_turns_without_crossing_them():
    values = simple_metrics(CHAT)
    # 14 unigrams; "like" and "cats" appear twice: 12 distinct.
    assert values["distinct_1"] == pytest.approx(12 / 14)
    # bigrams: 2 + 4 + 5 = 11; "like cats" twice: 10 distinct (none spans two turns).
    assert values["distinct_2"] == pytest.approx(10 / 11)


def test_distinct_n_of_no_ngrams_is_none():
    assert distinct_n([["one"]], 2) is None
    assert distinct_n([], 1) is None


def test_question_rate_is_the_share_of_system_turns_with_a_question_mark():
    assert simple_metrics(CHAT)["question_rate"] == pytest.approx(1 / 3)


def test_self_repetition_counts_later_turns_repeating_an_earlier_one():
    # "do you like / you like cats / like cats ?" and "i like cats / like cats a / cats a lot / a lot ."
    # share no trigram with each other or with "hello there !": 0 of 2.
    assert simple_metrics(CHAT)["self_repetition"] == 0.0
    repeating = [["i", "like", "cats", "."], ["ok"], ["ok"], ["so", "i", "like", "cats", "!"]]
    # turn 2 ("ok") new; turn 3 repeats turn 2 exactly; turn 4 repeats the trigram "i like cats": 2 of 3.
    assert self_repetition(repeating) == pytest.approx(2 / 3)
    assert self_repetition([["only", "one"]]) is None


def test_a_conversation_where_the_system_never_speaks_has_no_rates():
    values = simple_metrics([("user", "Hello?"), ("bot", "anyone?")])
    assert values["system_turns"] == 0
    assert all(values[name] is None for name in values if name != "system_turns")


def test_metrics_take_turn_dicts_and_keep_the_conversations_order():
    as_dicts = [{"speaker": s, "text": t} for s, t in CHAT]
    values = conversation_metrics([as_dicts, CHAT[:2]])
    assert values["system_turns"] == [3, 1]
    assert values["question_rate"] == [pytest.approx(1 / 3), 0.0]


def test_unknown_metric_names_are_refused():
    with pytest.raises(ValueError, match="unknown conversation metrics: bleu"):
        conversation_metrics([CHAT], ["bleu"])


def test_coherence_pairs_each_system_turn_with_the_turn_before_it():
    chat = [("system", "Opening line"), ("user", "Hi"), ("system", "Hello"), ("user", " "), ("system", "Still there?")]
    # the first turn has nothing before it; the last follows an empty turn
    assert coherence_pairs(chat) == [("Hi", "Hello")]


@pytest.mark.slow
def test_minilm_coherence_is_the_mean_cosine_of_consecutive_turns():
    from scoring.metrics.conversation import sentence_vectors

    on_topic = [("user", "I love my dog."), ("system", "Dogs are wonderful pets."), ("user", "x"), ("system", "x")]
    values = conversation_metrics([on_topic, [("system", "alone")]], ALL)
    vectors = sentence_vectors(["I love my dog.", "Dogs are wonderful pets.", "x"])
    expected = (float(vectors["I love my dog."] @ vectors["Dogs are wonderful pets."]) + 1.0) / 2
    assert values["minilm_coherence"][0] == pytest.approx(expected, abs=1e-5)
    assert values["minilm_coherence"][1] is None
    assert math.isclose(float(vectors["x"] @ vectors["x"]), 1.0, abs_tol=1e-5)
    off_topic = [("user", "I love my dog."), ("system", "The stock market fell sharply today.")]
    assert conversation_metrics([off_topic], ["minilm_coherence"])["minilm_coherence"][0] < expected
