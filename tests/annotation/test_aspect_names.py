"""Aspect names are checked when a survey is created: the column's length and what the submit parser reads."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Aspect, Survey
from annotation.services.assignments import parse_answers
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

MARKUP = "<img src=x onerror=alert(9)>"
TOO_LONG = "a" * 51


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=dataset_records(6), name="aspects-data", owner=researcher)


def _form(dataset, aspects):
    return {
        "dataset": dataset.pk,
        "name": "aspect-study",
        "task_type": "rate",
        "aspects": aspects,
        "instructions": "Rate.",
        "contexts_per_hit": 3,
        "assignments_per_hit": 1,
        "attention_checks_per_hit": 0,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 10,
        "attention_policy": "flag",
    }


@pytest.mark.parametrize("bad", [MARKUP, TOO_LONG, "topic relevance", "thé"])
def test_the_survey_form_refuses_an_aspect_name_naming_it_and_the_rule(researcher_client, dataset, bad):
    response = researcher_client.post(reverse("annotation:survey_new"), _form(dataset, f"topicality, {bad}"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "cannot be used" in page and "digits, &#x27;-&#x27; and &#x27;_&#x27; (no spaces), at most 50" in page
    shown = bad if len(bad) <= 60 else bad[:60]
    assert shown.replace("<", "&lt;").replace(">", "&gt;") in page
    assert MARKUP not in page  # escaped, never markup
    assert not Survey.objects.exists() and not Aspect.objects.exists()


@pytest.mark.parametrize("bad", [MARKUP, TOO_LONG, "topic relevance"])
def test_create_survey_refuses_an_aspect_name_and_creates_nothing(dataset, bad):
    with pytest.raises(CommandError) as refused:
        call_command("create_survey", dataset="aspects-data", name="cmd-study", aspects=f"topicality,{bad}")
    message = str(refused.value)
    assert bad[:60] in message and "letters a-z and A-Z, digits, '-' and '_'" in message
    assert not Survey.objects.exists() and not Aspect.objects.exists()


def test_accepted_names_are_stored_as_given_and_read_back_by_the_submit_parser(researcher_client, dataset):
    keys = ["topic-relevance", "Informativeness_2", "x" * 50]
    response = researcher_client.post(reverse("annotation:survey_new"), _form(dataset, ", ".join(keys)))
    assert response.status_code == 302, response.content.decode()[:2000]
    survey = Survey.objects.get(name="aspect-study")
    stored = list(survey.aspects.order_by("position").values_list("key", flat=True))
    assert stored == ["overall", *keys]  # not lower-cased or otherwise rewritten
    fields = {f"score-7-{key}": "4" for key in stored}
    assert parse_answers(fields) == {7: {"scores": dict.fromkeys(stored, "4"), "seconds": None, "text": None}}
