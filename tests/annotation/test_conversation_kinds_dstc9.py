"""The conversation kinds on real data: DSTC9's interactive-evaluation dialogues (four systems,
scores as released: overall 1-5, consistent 0-1, the other aspects 1-3)."""

import re

import pytest

from annotation import services
from annotation.models import ConversationJudgement, ConversationRating, ConversationTurn, HITItem
from annotation.views.task_page.display import task_context
from tests.annotation.conversation_study_helpers import acute_answers, claimed, conversation_answers
from tests.annotation.dstc9_helpers import import_dstc9

pytestmark = [pytest.mark.shared_data, pytest.mark.django_db]


@pytest.fixture
def dstc9(shared_data, tmp_path, researcher):
    return import_dstc9(shared_data, tmp_path, researcher)


def test_a_conversation_survey_on_dstc9_asks_its_aspects_on_the_release_scales_and_stores_answers(dstc9, researcher):
    released = set(dstc9.conversation_aspects.values_list("key", flat=True))
    survey = services.survey_create(dataset=dstc9, name="turns", owner=researcher, task_type="conversation")
    scales = {a.key: (a.scale_min, a.scale_max) for a in survey.aspects.filter(per_turn=False)}
    assert {"overall", "coherent", "consistent", "informative"} <= set(released), "the release rates these"
    assert scales["overall"] == (1, 5) and scales["consistent"] == (0, 1) and scales["coherent"] == (1, 3)
    assert scales["informative"] == (1, 3)
    assert "engaging" not in released and scales["engaging"] == (1, 5), "an aspect the release lacks keeps 1-5"
    survey = services.survey_launch(survey=survey)
    assignment = claimed(survey)
    html = str(task_context(survey=survey, assignment=assignment)["items_html"])
    assert not re.search(r"chatbot\d", html), "no system name (chatbot1-4) nor conversation id on the page"
    # The page's weight grows with the conversations' length (DSTC9's average 34 turns): what the page
    # adds to each turn's text stays small, so 6 conversations of ~25 turns stay well under 150 KB.
    # Each conversation block also carries its whole-conversation questions (at most 4 KB); the page
    # budget now gives a task short conversations at times, so that share is set apart, not spread.
    items = services.assignment_items(assignment=assignment)
    turns = ConversationTurn.objects.filter(conversation_id__in=[item.conversation_id for item in items])
    text = sum(len(turn.text.encode()) for turn in turns)
    per_block = 4000 * len(items)
    assert (len(html.encode()) - text - per_block) / turns.count() < 600, "markup per turn"
    result = services.assignment_submit(assignment=assignment, answers=conversation_answers(assignment, score=1))
    assert result.checks_failed == 0
    imported = ConversationRating.objects.filter(survey=None).count()
    assert ConversationRating.objects.filter(survey=survey).count() == result.ratings > 0
    assert ConversationRating.objects.filter(survey=None).count() == imported, "imported rows untouched"


def test_an_acute_survey_on_dstc9_pairs_conversations_of_different_systems(dstc9, researcher):
    survey = services.survey_create(dataset=dstc9, name="acute", owner=researcher, task_type="acute")
    pairs = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.CONV_PAIR).select_related(
        "conversation", "conversation_b"
    )
    assert pairs.count() > 1000
    assert all(p.conversation.system_id != p.conversation_b.system_id for p in pairs[:500])
    survey = services.survey_launch(survey=survey)
    assignment = claimed(survey)
    result = services.assignment_submit(assignment=assignment, answers=acute_answers(assignment, choose="b"))
    assert result.checks_failed == 0
    assert ConversationJudgement.objects.filter(survey=survey, winner="b").count() == result.ratings > 0
