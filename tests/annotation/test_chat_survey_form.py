"""A live chat survey made from the researcher's survey form, as `create_survey --task-type chat` makes
it: the form offered the chat type but had no field for its chat systems, so every try was refused
("A chat survey needs at least one chat system")."""

import pytest
from django.urls import reverse

from annotation.models import Dataset, Survey
from tests.annotation.live_chat_helpers import chat_system

pytestmark = pytest.mark.django_db

BOT = "http://127.0.0.1:9/v1"  # never asked: making a survey sends nothing


def _form(dataset, **extra):
    return {
        "dataset": dataset.pk,
        "name": "chat-from-the-page",
        "task_type": "chat",
        "question": "",
        "instructions": "Chat with the system, then rate the conversation.",
        "contexts_per_hit": 1,
        "assignments_per_hit": 1,
        "attention_checks_per_hit": 0,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 100,
        "attention_policy": "flag",
        "provider": "local",
        **extra,
    }


@pytest.fixture
def dataset(researcher):
    return Dataset.objects.create(owner=researcher, name="chats")  # a chat survey's dataset may start empty


def test_the_form_makes_a_chat_survey_with_its_systems_turns_scales_and_effort_rule(
    researcher, researcher_client, dataset, settings
):
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    chat_system(researcher, BOT, name="bot-a")
    chat_system(researcher, BOT, name="bot-b")
    page = researcher_client.get(reverse("annotation:survey_new")).content.decode()
    assert 'data-field="chat_systems" data-task-type="chat"' in page  # shown for the chat type only
    response = researcher_client.post(reverse("annotation:survey_new"), _form(
        dataset, chat_systems=["bot-a", "bot-b"], chat_min_turns=3, chat_max_turns=6,
        chat_conversations_per_system=4, chat_opening="bot", chat_seed_text="Plan a picnic.",
        chat_turn_scales="fun=How much fun is this reply?", chat_effort_max_short_share=0.5,
        chat_effort_max_idle_seconds=300,
    ))  # fmt: skip
    assert response.status_code == 302
    survey = Survey.objects.get(name="chat-from-the-page")
    assert response.status_code == 302 and response.url == reverse("annotation:survey_detail", args=[survey.pk])
    chat = survey.chat_settings
    assert sorted(chat.chat_systems.values_list("name", flat=True)) == ["bot-a", "bot-b"]
    assert (chat.min_turns, chat.max_turns, chat.conversations_per_system, chat.opening) == (3, 6, 4, "bot")
    assert chat.seed_text == "Plan a picnic."
    assert (chat.effort_max_short_share, chat.effort_max_pasted_share, chat.effort_max_idle_seconds) == (0.5, None, 300)
    scale = survey.aspects.get(key="fun")
    assert scale.per_turn and scale.question == "How much fun is this reply?"
    assert survey.hits.count() == 2 * 4  # one conversation a HIT, laid out round the systems

    # Its draft's edit page shows the chat settings, fixed.
    edit = researcher_client.get(reverse("annotation:survey_edit", args=[survey.pk])).content.decode()
    assert 'name="chat_min_turns" value="3"' in edit and "Fixed once the survey is made" in edit


def test_a_chat_survey_without_a_chat_system_is_refused_at_the_field_and_nothing_is_made(
    researcher, researcher_client, dataset
):
    response = researcher_client.post(reverse("annotation:survey_new"), _form(dataset, chat_min_turns=3))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Tick at least one chat system" in body and "You have no chat system yet" in body
    assert not Survey.objects.exists()


def test_another_researchers_chat_system_is_not_offered_nor_accepted(
    researcher, other_researcher, researcher_client, dataset, settings
):
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    chat_system(other_researcher, BOT, name="their-bot")
    page = researcher_client.get(reverse("annotation:survey_new")).content.decode()
    assert "their-bot" not in page
    response = researcher_client.post(
        reverse("annotation:survey_new"), _form(dataset, chat_systems=["their-bot"], chat_min_turns=3)
    )
    assert response.status_code == 200 and not Survey.objects.exists()
    assert "their-bot is not one of the available choices" in response.content.decode()


def test_a_rating_survey_ignores_the_chat_fields(researcher, researcher_client):
    from tests.annotation.studies_helpers import dataset_records
    from tests.factories import load_dataset_records

    rated = load_dataset_records(records=dataset_records(3), name="rated", owner=researcher)
    response = researcher_client.post(reverse("annotation:survey_new"), _form(rated, task_type="rate"))
    assert response.status_code == 302
    assert Survey.objects.get().task_type == "rate"
