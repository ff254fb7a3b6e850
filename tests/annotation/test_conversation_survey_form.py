"""Conversation surveys made from the researcher's survey form: the form's estimate counts the
dataset's conversations (pairs), and the survey gets its kind's questions."""

import pytest
from django.urls import reverse

from annotation.models import Survey
from annotation.services.conversations import conversations_import
from tests.annotation.conversation_files import jsonl
from tests.annotation.conversation_study_helpers import conversation_records

pytestmark = pytest.mark.django_db


def _form(dataset, task_type, **extra):
    return {
        "dataset": dataset.pk,
        "name": f"{task_type}-study",
        "task_type": task_type,
        "question": "How appropriate is this response to the conversation?",
        "instructions": "Read each conversation.",
        "contexts_per_hit": 3,
        "assignments_per_hit": 2,
        "attention_checks_per_hit": 1,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 100,
        "attention_policy": "flag",
        "provider": "local",
        **extra,
    }


@pytest.mark.parametrize(
    ("task_type", "units", "main"), [("conversation", 12, "Overall, how good"), ("acute", 6, "Who would")]
)
def test_the_survey_form_estimates_and_creates_a_conversation_survey(
    researcher, researcher_client, task_type, units, main
):
    dataset = conversations_import(file=jsonl(conversation_records(n=6)), name="chats", owner=researcher)
    estimate = researcher_client.post(reverse("annotation:survey_new"), {**_form(dataset, task_type), "estimate": "1"})
    assert estimate.status_code == 200
    assert estimate.context["estimate"]["hits"] == -(-units // 3), "HITs counted from the conversations"
    response = researcher_client.post(reverse("annotation:survey_new"), _form(dataset, task_type))
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    survey = Survey.objects.get(name=f"{task_type}-study")
    assert survey.task_type == task_type and survey.hits.count() == -(-units // 3)
    assert survey.aspects.get(key="overall").question.startswith(main), "the kind's question, not the rating one"
