"""MiniLM near-duplicates and the reference-LLM flag (issue 40) on small crafted replies, with the real
packaged all-MiniLM-L6-v2 (offline), through the pure detectors and through a writing survey."""

import itertools

import pytest

from annotation import services
from annotation.quality.integrity.similarity import (
    NEAR_DUPLICATE,
    REFERENCE_LLM,
    WrittenAnswer,
    near_duplicate_flags,
    reference_llm_flags,
)
from annotation.quality.integrity.thresholds import DEFAULTS
from annotation.quality.integrity_report import survey_integrity
from annotation.services.extensions.points import sentence_encoder
from tests.factories import load_dataset_records

CONTEXT = "I just moved to a new city and I don't know anyone here. Any ideas how to meet people?"
PEOPLE = [
    "oh that's rough, i moved last year too. try a climbing gym, people there talk to you",
    "Join a running club! That's how I met most of my friends when I moved.",
    "honestly just say yes to every invite from work for the first few months",
    "Maybe check meetup, there's usually board game nights and stuff",
]
# Copies with the words changed (few word trigrams survive): only the meaning is kept.
PARAPHRASES = [
    ("I moved last year as well and it was hard. A climbing gym is a good idea, the people there chat with you.", 0),
    ("Join a club for running! When I moved, that is how I met the majority of my friends.", 1),
]
# Reworded so far that MiniLM puts it at 0.70 from its original: below the threshold, a known miss (as two
# people giving the same advice independently would sit there too).
HEAVY_REWORDING = ("Sign up for a running group; after my move that is where I found nearly all my mates.", 1)
LLM_SAMPLES = [
    "Moving to a new city can feel isolating, but there are many ways to meet people! Consider joining local "
    "clubs or groups that match your interests, such as sports teams, book clubs, or hiking groups. Volunteering "
    "is another great way to connect with like-minded individuals. You could also try apps like Meetup or Bumble BFF.",
    "That can be tough! Here are a few ideas: join a local club or class that aligns with your hobbies, volunteer "
    "for a cause you care about, attend community events, or use apps like Meetup to find groups. Saying yes to "
    "invitations from coworkers can also help you build connections.",
]
# A fresh sample of the same LLM, as a worker who asked it would paste.
LLM_FRESH = (
    "Relocating to a new city can be lonely at first, but there are plenty of ways to build connections! Try "
    "joining clubs or classes that match your hobbies, such as a sports league or a book club. Volunteering and "
    "community events are also great options, and apps like Meetup can help you find local groups."
)


@pytest.fixture(scope="module")
def vectors():
    encoder = sentence_encoder()
    assert encoder is not None, "scoring registers MiniLM's encoder when the apps load"
    return encoder(PEOPLE + [text for text, _ in PARAPHRASES] + LLM_SAMPLES + [LLM_FRESH])


def test_the_encoder_gives_unit_vectors_whose_dot_product_is_the_cosine(vectors):
    for vector in vectors.values():
        assert float(vector @ vector) == pytest.approx(1.0, abs=1e-5)
    # The crafted cases the thresholds were set on (thresholds.py says so): copies far above, people far below.
    people = [float(vectors[a] @ vectors[b]) for a, b in itertools.combinations(PEOPLE, 2)]
    copies = [float(vectors[text] @ vectors[PEOPLE[k]]) for text, k in PARAPHRASES]
    assert max(people) < DEFAULTS.embedding_cosine - 0.2 and min(copies) >= DEFAULTS.embedding_cosine


def _answers(texts, start=0):
    return [
        WrittenAnswer(f"a{start + k}", f"w{start + k}", "c1", text, float(start + k)) for k, text in enumerate(texts)
    ]


def test_a_paraphrased_copy_is_caught_by_minilm_where_word_ngrams_miss_it(vectors):
    answers = _answers(PEOPLE) + _answers([text for text, _ in PARAPHRASES], start=len(PEOPLE))
    embeddings = {a.answer: vectors[a.text] for a in answers}
    by_ngrams = near_duplicate_flags(answers, context_texts={"c1": CONTEXT})
    by_both = near_duplicate_flags(answers, embeddings=embeddings, context_texts={"c1": CONTEXT})
    copies = {f"a{len(PEOPLE) + k}": f"a{k}" for k, (_, k) in enumerate(PARAPHRASES)}
    assert not any(by_ngrams[a].raised for a in copies)
    for copy, original in copies.items():
        flag = by_both[copy]
        assert flag.name == NEAR_DUPLICATE and flag.raised and flag.evidence["raised_by"] == ["embedding"]
        assert flag.evidence["other_answer"] == original
        assert flag.evidence["cosine"] == pytest.approx(
            float(vectors[answers[int(copy[1:])].text] @ vectors[PEOPLE[int(original[1:])]]), abs=1e-6
        )
        assert "embedding cosine ≥ 0.85" in flag.rule
    assert not any(by_both[f"a{k}"].raised for k in range(len(PEOPLE)))  # people's own replies stay unflagged


def test_a_heavy_rewording_stays_below_the_threshold_a_known_limit():
    encoder = sentence_encoder()
    text, k = HEAVY_REWORDING
    vectors = encoder([text, PEOPLE[k]])
    assert float(vectors[text] @ vectors[PEOPLE[k]]) < DEFAULTS.embedding_cosine


def test_short_replies_alike_by_meaning_are_not_compared_by_embedding():
    answers = _answers(["thanks a lot!", "thank you so much!"])
    flags = near_duplicate_flags(answers, embeddings={"a0": [1.0, 0.0], "a1": [1.0, 0.0]})
    assert not flags["a1"].raised and flags["a1"].evidence["cosine"] is None


def test_a_fresh_llm_sample_is_flagged_like_the_reference_llm_and_people_are_not(vectors):
    answers = _answers([*PEOPLE, LLM_FRESH])
    references = {"c1": [("llm-1", LLM_SAMPLES[0]), ("llm-2", LLM_SAMPLES[1])]}
    flags = reference_llm_flags(answers, references, embeddings=vectors, context_texts={"c1": CONTEXT})
    fresh = flags[f"a{len(PEOPLE)}"]
    assert fresh.name == REFERENCE_LLM and fresh.raised and "embedding" in fresh.evidence["raised_by"]
    best = max(float(vectors[LLM_FRESH] @ vectors[s]) for s in LLM_SAMPLES)
    assert fresh.evidence["cosine"] == pytest.approx(best, abs=1e-6) and fresh.evidence["samples"] == 2
    assert fresh.evidence["sample"] == "llm-1"  # the closest sample is named
    assert [flags[f"a{k}"].raised for k in range(len(PEOPLE))] == [False] * len(PEOPLE)


def test_without_embeddings_a_verbatim_llm_reply_is_still_caught_by_ngrams_and_no_sample_is_not_clean():
    answers = [WrittenAnswer("x", "w", "c1", LLM_SAMPLES[1], 0.0), WrittenAnswer("y", "w", "c2", LLM_FRESH, 0.0)]
    flags = reference_llm_flags(answers, {"c1": [("llm-1", LLM_SAMPLES[1])]})
    assert flags["x"].raised and flags["x"].evidence["containment"] == 1.0 and flags["x"].evidence["cosine"] is None
    assert not flags["y"].raised and flags["y"].evidence == {"sample": None, "samples": 0}


# --- through a writing survey -----------------------------------------------------------------------------


def _dataset(owner):
    records = [
        {
            "context_id": f"c{i}",
            "context": [CONTEXT],
            "references": ["a human reference"],
            "responses": [{"system": "llm-1", "text": LLM_SAMPLES[0]}, {"system": "llm-2", "text": LLM_SAMPLES[1]}],
        }
        for i in range(2)
    ]
    return load_dataset_records(records=records, name="moving", owner=owner)


@pytest.mark.django_db
def test_a_writing_survey_flags_the_reply_like_its_reference_llm_with_the_evidence(researcher):
    dataset = _dataset(researcher)
    with pytest.raises(Exception, match="'gpt-x' are not systems of the dataset"):
        services.survey_launch(
            survey=services.survey_create(
                dataset=dataset,
                name="bad",
                owner=researcher,
                task_type="write",
                write_system_name="people",
                reference_llm_systems="llm-1, gpt-x",
                contexts_per_hit=2,
                assignments_per_hit=2,
                attention_checks_per_hit=0,
            )
        )
    survey = services.survey_launch(
        survey=services.survey_create(
            dataset=dataset,
            name="writers",
            owner=researcher,
            task_type="write",
            write_system_name="people",
            reference_llm_systems="llm-1, llm-2",
            contexts_per_hit=2,
            assignments_per_hit=2,
            attention_checks_per_hit=0,
        )
    )
    for worker, texts in (("person", PEOPLE[:2]), ("asker", [LLM_FRESH, PEOPLE[2]])):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        items = services.assignment_items(assignment=assignment)
        answers = {
            item.pk: {"scores": {}, "seconds": "30", "text": text} for item, text in zip(items, texts, strict=True)
        }
        services.assignment_submit(assignment=assignment, answers=answers)
    integrity = survey_integrity(survey)
    assert integrity["embeddings"] is True and integrity["reference_llm_contexts"] == 2
    flagged = [(row["worker"], [f["name"] for f in row["flags"]]) for row in integrity["flagged_replies"]]
    assert len(flagged) == 1 and flagged[0][1] == [REFERENCE_LLM]
    evidence = integrity["flagged_replies"][0]["flags"][0]["evidence"]
    assert evidence["sample"] in {"llm-1", "llm-2"} and evidence["cosine"] >= DEFAULTS.reference_cosine


@pytest.mark.django_db
def test_create_survey_names_the_reference_llm_and_refuses_an_unknown_system(researcher):
    from django.core.management import CommandError, call_command

    from annotation.models import Survey

    _dataset(researcher)
    common = ["create_survey", "--dataset", "moving", "--task-type", "write", "--system-name", "people", "--draft"]
    call_command(*common, "--name", "w", "--reference-llm-systems", "llm-1,llm-2")
    assert Survey.objects.get(name="w").reference_llm_systems == "llm-1,llm-2"
    with pytest.raises(CommandError, match="'gpt' are not systems of the dataset"):
        call_command(*common, "--name", "w2", "--reference-llm-systems", "gpt")
    assert not Survey.objects.filter(name="w2").exists()
