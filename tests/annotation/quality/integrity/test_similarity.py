"""Near-duplicate replies by word n-grams and by supplied embedding vectors."""

import pytest

from annotation.quality.integrity.similarity import (
    WrittenAnswer,
    cosine_similarity,
    near_duplicate_flags,
    overlap,
    unquoted_ngrams,
    word_ngrams,
)

ORIGINAL = ("I would ask the waiter for the vegetarian menu and then order the mushroom risotto because "
            "it is the only warm dish they serve after ten")
# Three of 26 words changed and a sentence added.
COPY = ("I would ask the server for the vegetarian menu and then order the mushroom risotto since "
        "it is the only hot dish they serve after ten. Thanks a lot")
INDEPENDENT = ("Honestly the pasta sounds better to me, and the place closes late anyway so there is no rush "
               "to decide right now")


def test_word_ngrams_ignore_case_and_punctuation():
    assert word_ngrams("The cat, the CAT sat.", 2) == {("the", "cat"), ("cat", "the"), ("cat", "sat")}


def test_overlap_by_hand():
    a = {("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")}
    b = {("a", "b"), ("b", "c"), ("x", "y")}
    jaccard, containment = overlap(a, b)
    assert jaccard == pytest.approx(2 / 5)  # 2 shared of 5 distinct
    assert containment == pytest.approx(2 / 3)  # 2 shared of the shorter set's 3
    assert overlap(set(), b) == (None, None)


def _answers(*rows):
    return [WrittenAnswer(*row) for row in rows]


def test_an_edited_copy_is_flagged_on_the_later_answer_with_its_source():
    flags = near_duplicate_flags(_answers(
        ("r1", "alice", "c1", ORIGINAL, 100.0),
        ("r2", "bob", "c1", COPY, 900.0),
        ("r3", "carol", "c1", INDEPENDENT, 500.0),
    ))
    assert flags["r2"].raised
    assert flags["r2"].evidence["other_answer"] == "r1" and flags["r2"].evidence["other_worker"] == "alice"
    assert flags["r2"].evidence["other_first"] is True
    assert flags["r2"].evidence["containment"] > 0.5
    # The original came first: it has nothing earlier to copy; the independent answer copies nobody.
    assert not flags["r1"].raised and flags["r1"].evidence["other_answer"] is None
    assert not flags["r3"].raised
    assert flags["r3"].evidence["jaccard"] < 0.05


def test_without_times_both_answers_of_a_pair_are_flagged():
    flags = near_duplicate_flags(_answers(("r1", "alice", "c1", ORIGINAL), ("r2", "bob", "c1", COPY)))
    assert flags["r1"].raised and flags["r2"].raised


def test_answers_of_one_worker_or_of_other_contexts_are_not_compared():
    flags = near_duplicate_flags(_answers(
        ("r1", "alice", "c1", ORIGINAL, 1.0), ("r2", "alice", "c1", ORIGINAL, 2.0),
        ("r3", "bob", "c2", ORIGINAL, 3.0),
    ))
    assert not any(f.raised for f in flags.values())


def test_short_answers_are_not_called_copies_by_n_grams():
    flags = near_duplicate_flags(_answers(("r1", "a", "c", "I agree with that", 1.0),
                                          ("r2", "b", "c", "I agree with that", 2.0)))
    assert not flags["r2"].raised
    assert flags["r2"].evidence["jaccard"] == 1.0  # the evidence still says they are identical


def test_the_embedding_hook_catches_a_paraphrase_the_n_grams_miss():
    answers = _answers(("r1", "a", "c", ORIGINAL, 1.0), ("r2", "b", "c", INDEPENDENT, 2.0))
    assert not near_duplicate_flags(answers)["r2"].raised
    vectors = {"r1": [1.0, 0.0, 0.2], "r2": [0.98, 0.05, 0.21]}
    flag = near_duplicate_flags(answers, embeddings=vectors)["r2"]
    assert flag.raised
    assert flag.evidence["cosine"] == pytest.approx(cosine_similarity(vectors["r1"], vectors["r2"]))
    assert "cosine" in flag.rule


def test_cosine_similarity_by_hand():
    assert cosine_similarity([1, 0], [0, 1]) == 0.0
    assert cosine_similarity([3, 4], [6, 8]) == pytest.approx(1.0)
    assert cosine_similarity([0, 0], [1, 1]) is None


def test_the_very_same_words_are_a_copy_even_when_short():
    flags = near_duplicate_flags(_answers(("r1", "a", "c", "Sounds good, see you there!", 1.0),
                                          ("r2", "b", "c", "sounds good see you THERE", 2.0),
                                          ("r3", "c", "c", "Sounds good!", 3.0),
                                          ("r4", "d", "c", "Sounds good.", 4.0)))
    assert flags["r2"].raised and flags["r2"].evidence["identical_words"] is True
    # Two words alike is too little to call a copy.
    assert not flags["r4"].raised


def test_words_quoted_from_the_context_do_not_make_two_answers_copies():
    context = "Where would you take a friend from abroad for a first dinner in the city centre"
    first = "I would take a friend from abroad for a first dinner in the city centre to the noodle bar"
    second = "I would take a friend from abroad for a first dinner in the city centre to my aunt's bistro"
    answers = _answers(("r1", "a", "c", first, 1.0), ("r2", "b", "c", second, 2.0))
    assert near_duplicate_flags(answers)["r2"].raised
    flag = near_duplicate_flags(answers, context_texts={"c": context})["r2"]
    assert not flag.raised
    # Masking "take a friend ... city centre" leaves "to the noodle bar" and "to my aunt's bistro".
    assert flag.evidence["shared_ngrams"] == 0 and flag.evidence["ngrams"] == 3


def test_unquoted_ngrams_drop_those_that_touch_a_quote():
    quoted = word_ngrams("the red house", 3)
    # Every trigram of this sentence touches "the red house".
    assert unquoted_ngrams("we saw the red house at night", 3, quoted) == set()
    assert unquoted_ngrams("we saw it near the red house and a big tree", 2, word_ngrams("the red house", 2)) == {
        ("we", "saw"), ("saw", "it"), ("it", "near"), ("and", "a"), ("a", "big"), ("big", "tree")}
