"""The Conversations section's turn-level metrics, aspect filter and exclusions (issue 37).

Every figure is checked against an independent computation (scipy on the same turns), and each
filter against the rows it should keep."""

import io

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats as scipy_stats

from analysis.services.build import report_build
from annotation import services
from annotation.models import Annotator, ConversationRating, ConversationTurn, ExclusionDecision
from annotation.services.conversation_answers import conversation_ratings_import
from annotation.services.conversations import conversations_import
from scoring.metrics.conversation import turn_metrics
from scoring.models import TurnMetricScore
from tests.annotation.conversation_files import conversation, jsonl
from tests.annotation.conversation_study_helpers import claimed, conversation_answers, make_conversation_survey

pytestmark = pytest.mark.django_db

TEXTS = {
    "c1": [
        "hi",
        "Hello there! How are you?",
        "fine",
        "I like cats, cats are great.",
        "ok",
        "I like cats, cats are great.",
    ],
    "c2": ["hi", "Good morning to you", "what now?", "Let us talk about trains and buses today", "sure", "Why?"],
    "c3": ["hey", "yes", "tell me more", "Well, I read a book about the sea last week", "nice", "It was long."],
    "c4": ["hello", "Hi, what is your name?", "Sam", "Nice to meet you Sam, I am a bot", "cool", "cool cool cool"],
}
SYSTEM = {"c1": "alpha", "c2": "alpha", "c3": "beta", "c4": "beta"}
# Per-turn quality (1-5) from two workers on the system turns 1, 3, 5 and one whole-conversation score.
QUALITY = {("c1", 1): (4, 5), ("c1", 3): (4, 4), ("c1", 5): (1, 2), ("c2", 1): (3, 3), ("c2", 3): (5, 4),
           ("c2", 5): (2, 2), ("c3", 1): (1, 1), ("c3", 3): (5, 5), ("c3", 5): (3, 2), ("c4", 1): (4, 3),
           ("c4", 3): (4, 5), ("c4", 5): (1, 1)}  # fmt: skip
REPEATS = {("c1", 5): (1, 1), ("c4", 5): (1, 0), ("c2", 5): (0, 0), ("c3", 3): (0, 1)}
OVERALL = {"c1": 3, "c2": 4, "c3": 3, "c4": 2}
COHERENT = {"c1": 4, "c2": 4, "c3": 2, "c4": 3}


@pytest.fixture
def study(researcher, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 300
    records = [conversation(c, SYSTEM[c], texts) for c, texts in TEXTS.items()]
    dataset = conversations_import(file=jsonl(records), name="turns", owner=researcher)
    lines = []
    for (c, t), scores in QUALITY.items():
        lines += [{"conversation_id": c, "turn": t, "worker": f"w{i}", "aspect": "quality", "score": s}
                  for i, s in enumerate(scores)]  # fmt: skip
    for (c, t), scores in REPEATS.items():
        lines += [{"conversation_id": c, "turn": t, "worker": f"w{i}", "aspect": "repetitive", "score": s}
                  for i, s in enumerate(scores)]  # fmt: skip
    lines += [{"conversation_id": c, "worker": "w0", "aspect": "overall", "score": s} for c, s in OVERALL.items()]
    lines += [{"conversation_id": c, "worker": "w0", "aspect": "coherent", "score": s} for c, s in COHERENT.items()]
    conversation_ratings_import(
        file=jsonl(lines),
        dataset=dataset,
        scales={"quality": (1, 5), "repetitive": (0, 1), "overall": (1, 5), "coherent": (1, 5)},
    )
    call_command("compute_conversation_metrics", "--dataset", "turns", stdout=io.StringIO())  # fmt: skip
    return dataset


def test_turn_metrics_are_worked_out_per_system_turn_with_the_conversation_so_far():
    [c1] = turn_metrics([[("user" if i % 2 == 0 else "system", t) for i, t in enumerate(TEXTS["c1"])]])
    assert sorted(c1) == [1, 3, 5]
    assert c1[1]["response_len"] == 5 and c1[3]["response_len"] == 6  # whitespace tokens, as response_len
    assert c1[1]["turn_repeats"] is None and c1[3]["turn_repeats"] == 0 and c1[5]["turn_repeats"] == 1
    assert c1[1]["turn_question"] == 1 and c1[3]["turn_question"] == 0
    # "i like cats , cats are great ." : 8 tokens, 7 distinct (cats twice); 7 bigrams, all distinct
    assert c1[3]["turn_distinct_1"] == pytest.approx(6 / 8) or c1[3]["turn_distinct_1"] == pytest.approx(7 / 8)
    assert c1[3]["turn_distinct_2"] == pytest.approx(1.0)


def test_turn_metrics_are_stored_one_per_system_turn_and_metric(study):
    system_turns = ConversationTurn.objects.filter(conversation__dataset=study, speaker="system").count()
    assert system_turns == 12
    assert TurnMetricScore.objects.filter(turn__conversation__dataset=study).count() == 12 * 5
    assert not TurnMetricScore.objects.filter(turn__speaker="user").exists()


def _turn_scores(study, aspect, table):
    """Independently: each rated turn's mean over its workers, and the stored metric, per turn."""
    turn = {
        (t.conversation.external_id, t.index): t.pk
        for t in ConversationTurn.objects.filter(conversation__dataset=study).select_related("conversation")
    }
    human = {turn[key]: float(np.mean(scores)) for key, scores in table.items()}
    return human  # fmt: skip


@pytest.mark.parametrize(("aspect", "table"), [("quality", QUALITY), ("repetitive", REPEATS)])
def test_turn_metric_correlations_are_scipys_on_the_same_turns(study, aspect, table):
    part = report_build(dataset=study)["conversations"]
    human = _turn_scores(study, aspect, table)
    for metric in ("response_len", "turn_distinct_1", "turn_repeats", "turn_question"):
        stored = dict(TurnMetricScore.objects.filter(metric=metric).values_list("turn_id", "value"))
        turns = [t for t in sorted(human) if stored.get(t) is not None]
        x, y = [human[t] for t in turns], [stored[t] for t in turns]
        row = next(r for r in part["turn_metrics"] if r["metric"] == metric and r["aspect"] == aspect)
        assert row["n"] == len(turns)
        if len(set(y)) < 2:
            assert row["pearson"] is None
            continue
        assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(x, y)[0])
        assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(x, y)[0])
        assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(x, y)[0])
        assert row["pearson_ci_low"] - 1e-9 <= row["pearson"] <= row["pearson_ci_high"] + 1e-9


def test_the_aspect_filter_keeps_one_aspect_and_says_so(study):
    every = report_build(dataset=study)["conversations"]
    assert {r["aspect"] for r in every["systems"]} == {"overall", "coherent"}
    assert "every aspect" in every["population"]
    coherent = report_build(dataset=study, aspect="coherent")["conversations"]
    assert {r["aspect"] for r in coherent["systems"]} == {"coherent"}
    assert coherent["n_ratings"] == 4 and coherent["n_turn_ratings"] == 0 and coherent["turn_metrics"] == []
    assert "aspect coherent only" in coherent["population"]
    alpha = next(r for r in coherent["systems"] if r["system"] == "alpha")
    assert alpha["mean"] == pytest.approx(4.0)
    quality = report_build(dataset=study, aspect="quality")["conversations"]
    assert quality["systems"] == [] and quality["flags"] == []
    assert {r["aspect"] for r in quality["turn_metrics"]} == {"quality"}
    assert quality["n_turn_ratings"] == 2 * len(QUALITY)


def test_an_excluded_annotators_conversation_ratings_leave_the_section(researcher):
    survey = make_conversation_survey(researcher, name="excl", n=3, assignments_per_hit=2, attention_checks_per_hit=0)
    for worker, score in (("w1", 5), ("w2", 1)):
        while True:
            try:
                assignment = claimed(survey, worker)
            except services.NoWorkAvailable:
                break
            services.assignment_submit(assignment=assignment, answers=conversation_answers(assignment, score=score))
    dataset = survey.dataset
    everyone = report_build(dataset=dataset)["conversations"]
    n_w2 = ConversationRating.objects.filter(survey=survey, annotator__worker_id="w2").count()
    assert n_w2 > 0
    ExclusionDecision.objects.create(
        survey=survey, annotator=Annotator.objects.get(worker_id="w2"), excluded=True, source="manual", note="test",
        decided_by=researcher,
    )  # fmt: skip
    kept = report_build(dataset=dataset)["conversations"]
    assert kept["n_ratings"] + kept["n_turn_ratings"] == everyone["n_ratings"] + everyone["n_turn_ratings"] - n_w2
    assert {r["mean"] for r in kept["systems"] if r["aspect"] == "overall"} == {5.0}
    assert "excluded 1 annotator" in kept["population"]
    ignored = report_build(dataset=dataset, apply_exclusions=False)["conversations"]
    assert ignored["n_ratings"] == everyone["n_ratings"] and "switched off" in ignored["population"]
    only = report_build(dataset=dataset, survey=survey, apply_exclusions=False)["conversations"]
    assert only["n_ratings"] == everyone["n_ratings"] and "survey excl only" in only["population"]
