"""The ACUTE-Eval kind (issue 37): pairs of conversations of different systems (same seed), sides
drawn and recorded, ACUTE's questions, check pairs with a broken side, judgements stored per survey."""

import io

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from annotation import services
from annotation.kinds.acute.kind import ACUTE_QUESTIONS
from annotation.kinds.acute.layout import BROKEN_TEXT
from annotation.kinds.registry import kind_for
from annotation.models import Assignment, AttentionAnswer, ConversationJudgement, HITItem, Survey
from annotation.services.conversation_answers import conversation_judgements_import
from annotation.views.task_page.display import task_context
from tests.annotation.conversation_study_helpers import SYSTEMS, acute_answers, claimed, make_conversation_survey

pytestmark = pytest.mark.django_db


def _acute(owner, **settings):
    return make_conversation_survey(owner, task_type="acute", **settings)


def test_pairs_compare_two_systems_on_one_seed_with_sides_drawn_and_acute_questions(researcher):
    survey = _acute(researcher, n=8, launch=False)
    questions = list(survey.aspects.order_by("position").values_list("question", flat=True))
    assert questions == [question for _, question in ACUTE_QUESTIONS]
    pairs = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.CONV_PAIR).select_related(
        "conversation__system", "conversation_b__system"
    )
    assert pairs.count() == 8, "one pair per seed shared by the two systems"
    for pair in pairs:
        assert pair.conversation.system_id != pair.conversation_b.system_id
        assert pair.conversation.seed == pair.conversation_b.seed
    lefts = {pair.conversation.system.name for pair in pairs}
    assert lefts == set(SYSTEMS), "each system is shown on the left in some pairs"
    golds = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.CONV_PAIR_GOLD)
    assert golds.count() == survey.hits.count() and all(g.position > 0 for g in golds)


def test_a_dataset_of_one_system_is_refused(researcher):
    survey = make_conversation_survey(researcher, launch=False)
    one = survey.systems.model.objects.filter(dataset=survey.dataset).first()
    with pytest.raises(services.HITLayoutError, match="no two conversations"):
        services.survey_create(dataset=survey.dataset, name="one", owner=researcher, task_type="acute", systems=[one])


def test_the_page_is_blind_and_a_check_pair_shows_a_broken_side(researcher):
    survey = _acute(researcher)
    assignment = claimed(survey)
    html = str(task_context(survey=survey, assignment=assignment)["items_html"])
    for hidden in (*SYSTEMS, "topic-", "meena-0"):
        assert hidden not in html
    assert BROKEN_TEXT in html and html.count('class="acute-side"') == 2 * len(
        services.assignment_items(assignment=assignment)
    )


def test_judgements_are_stored_per_survey_with_the_sides_shown_and_the_reason(researcher):
    survey = _acute(researcher)
    assignment = claimed(survey)
    result = services.assignment_submit(assignment=assignment, answers=acute_answers(assignment, reason="  more fun "))
    assert (result.checks_passed, result.checks_failed) == (1, 0)
    stored = ConversationJudgement.objects.filter(survey=survey, assignment=assignment)
    pairs = [i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.CONV_PAIR]
    assert stored.count() == len(pairs) * len(ACUTE_QUESTIONS) == result.ratings
    assert set(stored.values_list("winner", "reason", "position_known")) == {("a", "more fun", True)}
    assert set(stored.values_list("question", flat=True)) == {q for _, q in ACUTE_QUESTIONS}
    assert {(j.conversation_a_id, j.conversation_b_id) for j in stored} == {
        (p.conversation_id, p.conversation_b_id) for p in pairs
    }
    with pytest.raises(IntegrityError), transaction.atomic():
        first = stored.first()
        first.pk = None
        first.save()


def test_choosing_the_broken_side_fails_the_check_and_an_unanswered_pair_is_named(researcher):
    survey = _acute(researcher)
    assignment = claimed(survey)
    items = services.assignment_items(assignment=assignment)
    with pytest.raises(services.SubmissionRefused, match="comparison 2 is still unanswered"):
        services.assignment_submit(assignment=assignment, answers=acute_answers(assignment, leave_out=(items[1].pk,)))
    answers = acute_answers(assignment)
    gold = next(item for item in items if item.kind == HITItem.Kind.CONV_PAIR_GOLD)
    broken = "b" if gold.instructed_score == 0 else "a"
    answers[gold.pk]["scores"] = dict.fromkeys(answers[gold.pk]["scores"], broken)
    with pytest.raises(services.SubmissionRefused, match="choose conversation 1 or 2"):
        bad = {
            **answers,
            items[0].pk: {**answers[items[0].pk], "scores": dict.fromkeys(answers[gold.pk]["scores"], "tie")},
        }
        services.assignment_submit(assignment=assignment, answers=bad)
    assert services.assignment_submit(assignment=assignment, answers=answers).checks_failed == 1
    assert Assignment.objects.get(pk=assignment.pk).flagged


def test_simulated_annotators_compare_and_pass_the_checks_and_the_export_imports_back(researcher):
    survey = _acute(researcher)
    call_command("simulate_ratings", survey.name, "--annotators", "4", stdout=io.StringIO())
    stored = ConversationJudgement.objects.filter(survey=survey)
    assert stored.count() == 6 * len(ACUTE_QUESTIONS) * 2
    assert not AttentionAnswer.objects.filter(assignment__hit__survey=survey, passed=False).exists()
    stream = io.StringIO()
    assert kind_for(survey).export(dataset=survey.dataset, survey=survey, stream=stream, fmt="jsonl") == stored.count()
    imported = conversation_judgements_import(file=stream.getvalue().encode(), dataset=survey.dataset)
    assert imported.count == stored.count()
    assert ConversationJudgement.objects.filter(survey=None).count() == stored.count()


def test_create_survey_command_makes_an_acute_survey(researcher):
    make_conversation_survey(researcher, name="seed", launch=False)
    out = io.StringIO()
    call_command(
        "create_survey",
        "--dataset",
        "ds-seed",
        "--name",
        "cmp",
        "--task-type",
        "acute",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert Survey.objects.get(name="cmp").hits.exists() and "/s/" in out.getvalue()
