"""An extra aspect tells annotators what it means: a researcher gives each a one-line definition and the
labels of its scale's ends on the survey form (or later, while the survey is a draft), and the task page
shows them as it shows the overall question's; an aspect without labels reads 1 = Poor · 5 = Excellent."""

import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.models import Aspect, Survey
from annotation.services.text.aspect_details import aspect_details_parse, aspect_details_text
from tests.annotation.link_helpers import task_page
from tests.annotation.studies_helpers import dataset_records, make_survey, survey_form_fields
from tests.factories import load_dataset_records

MARKUP = "<b onmouseover=alert(1)>x</b>"
ESCAPED = "&lt;b onmouseover=alert(1)&gt;x&lt;/b&gt;"
SCALES = {"topicality": (1, 5), "fluency": (1, 5)}
TOPICALITY = "topicality: Does the reply stay on the conversation's topic? | 1 = Off topic | 5 = Fully on topic"


def test_a_line_gives_its_aspect_a_definition_and_labels_for_any_points():
    text = TOPICALITY + "\n\nfluency: Is it good English? | 5 = Native | 3 = Some slips | 1 = Hard to read"
    details, problems = aspect_details_parse(text, SCALES)
    assert problems == []
    assert details["topicality"] == {
        "definition": "Does the reply stay on the conversation's topic?",
        "scale_labels": {"1": "Off topic", "5": "Fully on topic"},
    }
    assert details["fluency"]["scale_labels"] == {"5": "Native", "3": "Some slips", "1": "Hard to read"}


def test_a_definition_alone_is_enough_and_reads_back_as_written():
    details, problems = aspect_details_parse("fluency: Is it good English?", SCALES)
    assert problems == [] and details == {"fluency": {"definition": "Is it good English?", "scale_labels": {}}}
    again = aspect_details_text([("topicality", *aspect_details_parse(TOPICALITY, SCALES)[0]["topicality"].values())])
    assert again == TOPICALITY


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("topicality: " + "x" * 201, "Aspect 'topicality', definition: 201 characters; at most 200."),
        ("topicality: On topic? | 1 = " + "y" * 41 + " | 5 = On", "Aspect 'topicality', label of 1: 41 characters"),
        ("topicality: On topic? | 1 = Off topic", "Aspect 'topicality', scale labels: label both ends of the"),
        ("topicality: On topic? | 1 = Off | 6 = On", "Aspect 'topicality', scale labels: 6 is not a point of its 1-5"),
        ("topicality: On topic? | Off topic", "Aspect 'topicality', scale labels: write each as `1 = Off topic`"),
        ("topicality: On topic? | 1 = Off | 1 = On | 5 = x", "Aspect 'topicality', scale labels: 1 is labelled twice"),
        ("overall: Is it good?", "'overall' is not one of the survey's extra aspects (topicality, fluency)"),
        ("just a sentence", "Line 1: start with the aspect's name and a colon"),
        (TOPICALITY + "\n" + TOPICALITY, "Aspect 'topicality' has two lines"),
    ],
)  # fmt: skip
def test_a_bad_line_is_refused_naming_the_aspect_and_the_field(line, problem):
    problems = aspect_details_parse(line, SCALES)[1]
    assert any(problem in p for p in problems), problems


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=dataset_records(3), name="aspect-details", owner=researcher)


def _create(client, dataset, **extra):
    fields = survey_form_fields(dataset, name="topical", provider="local", aspects="topicality, fluency", **extra)
    return client.post(reverse("annotation:survey_new"), fields)


@pytest.mark.django_db
def test_the_survey_form_stores_each_aspects_definition_and_labels(researcher_client, dataset):
    response = _create(researcher_client, dataset, aspect_details=TOPICALITY)
    assert response.status_code == 302, response.content.decode()[:3000]
    aspects = {a.key: a for a in Aspect.objects.filter(survey__name="topical")}
    assert aspects["topicality"].definition == "Does the reply stay on the conversation's topic?"
    assert aspects["topicality"].scale_labels == {"1": "Off topic", "5": "Fully on topic"}
    assert aspects["fluency"].definition == "" and aspects["fluency"].scale_labels == {}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("details", "task_type", "message"),
    [
        ("topicality: " + "x" * 201, "rate", "Aspect &#x27;topicality&#x27;, definition: 201 characters; at most 200."),
        ("fluency: Good? | 1 = Bad", "rate", "Aspect &#x27;fluency&#x27;, scale labels: label both ends"),
        ("relevance: Relevant?", "rate", "&#x27;relevance&#x27; is not one of the survey&#x27;s extra aspects"),
        (TOPICALITY, "pairwise", "Definitions and scale labels are for rating tasks"),
    ],
)  # fmt: skip
def test_the_survey_form_refuses_bad_details_saying_where_and_creates_nothing(
    researcher_client, dataset, details, task_type, message
):
    response = _create(researcher_client, dataset, aspect_details=details, task_type=task_type)
    page = response.content.decode()
    assert response.status_code == 200
    assert message in page
    assert 'href="#id_aspect_details"' in page  # the summary at the top links to the field
    assert not Survey.objects.exists() and not Aspect.objects.exists()


@pytest.mark.django_db
def test_the_task_page_shows_the_definition_under_the_question_and_the_labels_escaped(client, researcher):
    topicality = {
        "key": "topicality",
        "definition": f"Stays on topic {MARKUP}",
        "scale_labels": {"1": MARKUP, "5": "On"},
    }
    survey = make_survey(researcher, aspects=[topicality], contexts_per_hit=1)
    page = task_page(client, survey).content.decode()
    question = "How would you rate the topicality of this response?</legend>"
    shown = re.search(
        rf'{re.escape(question)}\n      <p class="scale-definition" id="(definition-\d+-topicality)">(.*?)</p>', page
    )
    assert shown and shown.group(2) == f"Stays on topic {ESCAPED}"
    assert re.search(rf'<fieldset class="scale" aria-describedby="candidate-\d+ {shown.group(1)}">', page)
    assert f'<span class="choice-label">{ESCAPED}</span>' in page
    assert f"1 = {ESCAPED} · 5 = On</p>" in page
    assert MARKUP not in page


@pytest.mark.django_db
def test_an_aspect_without_labels_reads_poor_to_excellent_beside_the_overall_questions_own(client, researcher):
    survey = make_survey(researcher, aspects=["topicality"], contexts_per_hit=1)
    page = task_page(client, survey).content.decode()
    assert "1 = Poor · 5 = Excellent</p>" in page
    assert "1 = Not appropriate or sensible · 5 = Very reasonable</p>" in page
    assert 'class="scale-definition"' not in page


def _details_url(survey):
    return reverse("annotation:survey_aspects", kwargs={"pk": survey.pk})


@pytest.mark.django_db
def test_the_owner_words_a_draft_surveys_aspects_and_the_preview_and_detail_page_show_them(
    researcher_client, researcher
):
    survey = make_survey(researcher, aspects=["topicality", "fluency"], launch=False)
    assert (
        'id="edit-aspects"'
        in researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    )
    response = researcher_client.post(_details_url(survey), {"aspect_details": TOPICALITY})
    assert response.status_code == 302
    detail = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    assert "Does the reply stay on the conversation&#x27;s topic?" in detail
    assert "(1 = Off topic · 5 = Fully on topic)" in detail and "(1 = Poor · 5 = Excellent)" in detail
    preview = researcher_client.get(reverse("annotation:survey_preview", args=[survey.pk])).content.decode()
    assert '">Does the reply stay on the conversation&#x27;s topic?</p>' in preview
    assert "1 = Off topic · 5 = Fully on topic</p>" in preview
    form = researcher_client.get(_details_url(survey)).content.decode()
    assert (
        "topicality: Does the reply stay on the conversation&#x27;s topic? | 1 = Off topic | 5 = Fully on topic" in form
    )


@pytest.mark.django_db
def test_a_bad_edit_says_what_is_wrong_and_changes_nothing(researcher_client, researcher):
    survey = make_survey(researcher, aspects=[{"key": "topicality", "definition": "On topic?"}], launch=False)
    response = researcher_client.post(_details_url(survey), {"aspect_details": "topicality: x | 1 = " + "y" * 41})
    page = response.content.decode()
    assert response.status_code == 200 and "Nothing was changed." in page
    assert "Aspect &#x27;topicality&#x27;, label of 1: 41 characters; at most 40." in page
    assert survey.aspects.get(key="topicality").definition == "On topic?"


@pytest.mark.django_db
def test_a_launched_surveys_aspects_stay_as_annotators_read_them(researcher_client, researcher):
    survey = make_survey(researcher, aspects=[{"key": "topicality", "definition": "On topic?"}])
    detail = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    assert 'id="edit-aspects"' not in detail
    response = researcher_client.post(_details_url(survey), {"aspect_details": TOPICALITY})
    assert (
        response.status_code == 200 and "its questions are fixed once it has been launched" in response.content.decode()
    )
    assert survey.aspects.get(key="topicality").definition == "On topic?"
    with pytest.raises(services.SurveyError):
        services.survey_aspects_describe(survey=survey, text="")


@pytest.mark.django_db
def test_another_researcher_can_neither_read_nor_change_the_aspects(client, researcher, other_researcher):
    survey = make_survey(researcher, aspects=["topicality"], launch=False)
    client.force_login(other_researcher)
    assert client.get(_details_url(survey)).status_code == 404
    assert client.post(_details_url(survey), {"aspect_details": TOPICALITY}).status_code == 404
    assert survey.aspects.get(key="topicality").definition == ""
