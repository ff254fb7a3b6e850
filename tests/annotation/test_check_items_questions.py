"""A check item asks every question a real item asks, so that an annotator cannot tell it apart by
its questions: a gold reply in a rating survey with several questions, and the gold and swapped
repeat pairs of a pairwise survey. Only the main question's answer is compared; the others must be
given (like a real item's) and are not stored. An instructed check says it is a check and, laid
out among fillers, asks every question too (see test_instructed_block_shape)."""

import pytest

from annotation import services
from annotation.models import AttentionAnswer, HITItem, PairwiseJudgement, Rating
from annotation.services import SubmissionRefused
from annotation.views.task_page.items import hit_blocks
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

GOLD = [{"turns": ["Is the sky green?"], "response_text": "No, it is blue.", "accepted_scores": [4, 5]}]
EXTRA = [{"key": "fluency", "scale_min": 1, "scale_max": 5}, {"key": "engaging", "scale_min": 1, "scale_max": 5}]


def _questions_per_kind(survey, assignment):
    items = services.assignment_items(assignment=assignment)
    kinds = {item.pk: item.kind for item in items}
    shown = [shown for block in hit_blocks(survey=survey, items=items) for shown in block["items"]]
    per_kind = {}
    for item in shown:
        per_kind.setdefault(kinds[int(item["id"])], set()).add(tuple(field["key"] for field in item["fields"]))
    return per_kind


def test_a_gold_reply_asks_every_question_and_only_the_main_answer_is_compared(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=2, aspects=EXTRA)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    per_kind = _questions_per_kind(survey, assignment)
    every = {("overall", "fluency", "engaging")}
    assert per_kind[HITItem.Kind.RESPONSE] == every and per_kind[HITItem.Kind.GOLD] == every
    assert per_kind[HITItem.Kind.INSTRUCTED] == every

    answers = good_answers(assignment)
    gold = next(i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.GOLD)
    only_main = {**answers, gold.pk: {**answers[gold.pk], "scores": {"overall": 4}}}
    with pytest.raises(SubmissionRefused) as refused:
        services.assignment_submit(assignment=assignment, answers=only_main)
    assert refused.value.missing == (gold.pk,)
    assert not Rating.objects.exists() and not AttentionAnswer.objects.exists()

    answers[gold.pk]["scores"] = {"overall": 5, "fluency": 1, "engaging": 2}
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.checks_failed == 0
    check = AttentionAnswer.objects.get(item=gold)
    assert check.score == 5 and check.passed
    responses = [i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.RESPONSE]
    assert Rating.objects.count() == 3 * len(responses)  # nothing stored from the check's other answers


def test_a_gold_replys_other_answers_must_be_on_their_scale(researcher):
    survey = make_survey(researcher, gold_checks=GOLD, attention_checks_per_hit=2, aspects=EXTRA)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = good_answers(assignment)
    gold = next(i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.GOLD)
    answers[gold.pk]["scores"]["fluency"] = 9
    with pytest.raises(SubmissionRefused):
        services.assignment_submit(assignment=assignment, answers=answers)
    assert not Rating.objects.exists() and not AttentionAnswer.objects.exists()


def test_check_pairs_ask_every_question_and_are_judged_on_the_main_one(researcher):
    survey = make_pairwise_survey(researcher, aspects=["fluency"])
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    per_kind = _questions_per_kind(survey, assignment)
    every = {("overall", "fluency")}
    for kind in (HITItem.Kind.PAIR, HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT):
        assert per_kind[kind] == every, kind

    answers = pairwise_answers(assignment)
    checks = [
        i
        for i in services.assignment_items(assignment=assignment)
        if i.kind in (HITItem.Kind.PAIR_GOLD, HITItem.Kind.PAIR_REPEAT)
    ]
    short = {**answers, checks[0].pk: {**answers[checks[0].pk], "scores": {"overall": "a"}}}
    with pytest.raises(SubmissionRefused) as refused:
        services.assignment_submit(assignment=assignment, answers=short)
    assert refused.value.missing == (checks[0].pk,)
    assert not PairwiseJudgement.objects.exists()

    for check in checks:  # the other question answered against the main one: still passed
        main = answers[check.pk]["scores"]["overall"]
        answers[check.pk]["scores"]["fluency"] = {"a": "b", "b": "a"}[main]
    result = services.assignment_submit(assignment=assignment, answers=answers)
    assert result.checks_failed == 0
    assert AttentionAnswer.objects.filter(assignment=assignment, passed=True).count() == len(checks)
    pairs = sum(1 for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.PAIR)
    assert PairwiseJudgement.objects.count() == 2 * pairs
