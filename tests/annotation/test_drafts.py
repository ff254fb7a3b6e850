"""Editing a draft survey's settings: the create form filled in, saved until launch, refused after."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation import services
from annotation.models import Survey
from annotation.services.drafts import survey_edit
from tests.annotation.studies_helpers import make_survey, survey_form_fields

pytestmark = pytest.mark.django_db

GOLD = "Is fire cold? => Yes, freezing. => 1,2"


@pytest.fixture
def draft(researcher):
    return make_survey(
        researcher,
        name="draft-study",
        launch=False,
        contexts_per_hit=3,
        aspects=["topicality"],
        gold_checks=[{"turns": ["Is fire cold?"], "response_text": "Yes, freezing.", "accepted_scores": [1, 2]}],
    )


def edit_fields(survey, **extra):
    fields = survey_form_fields(survey.dataset, name=survey.name, provider="local")
    fields.update(aspects="topicality", gold_checks=GOLD, attention_checks_per_hit=1, **extra)
    return fields


def test_the_draft_page_links_to_the_edit_form_which_is_filled_with_its_settings(researcher_client, draft):
    page = researcher_client.get(reverse("annotation:survey_detail", args=[draft.pk])).content.decode()
    url = reverse("annotation:survey_edit", args=[draft.pk])
    assert f'id="edit-survey" href="{url}"' in page
    form = researcher_client.get(url)
    html = form.content.decode()
    assert form.status_code == 200
    assert 'value="draft-study"' in html and 'name="contexts_per_hit" value="3"' in html
    assert "topicality" in html and "Is fire cold? =&gt; Yes, freezing. =&gt; 1,2" in html
    assert 'name="dataset"' in html and "disabled" in html  # the dataset is fixed


def test_saving_the_form_changes_the_settings_and_lays_out_the_hits_again_keeping_the_link(researcher_client, draft):
    token, n_hits = draft.token, draft.hits.count()
    url = reverse("annotation:survey_edit", args=[draft.pk])
    fields = edit_fields(draft, name="renamed", contexts_per_hit=1, systems="hred,tfidf", reward_cents=80)
    response = researcher_client.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:3000]
    survey = Survey.objects.get(pk=draft.pk)
    assert (survey.name, survey.contexts_per_hit, survey.reward_cents, survey.token) == ("renamed", 1, 80, token)
    assert sorted(survey.systems.values_list("name", flat=True)) == ["hred", "tfidf"]
    assert survey.hits.count() != n_hits and survey.hits.count() >= 12
    assert list(survey.aspects.values_list("key", flat=True)) == ["overall", "topicality"]
    assert survey.attention_checks.count() == 1
    # each HIT shows only the chosen systems' replies
    shown = {item.response.system.name for hit in survey.hits.all() for item in hit.items.exclude(response=None)}
    assert shown <= {"hred", "tfidf"}


def test_a_form_error_changes_nothing_and_says_where(researcher_client, researcher, draft):
    make_survey(researcher, name="other", launch=False)
    url = reverse("annotation:survey_edit", args=[draft.pk])
    response = researcher_client.post(url, edit_fields(draft, name="other", contexts_per_hit=1))
    assert response.status_code == 200 and "You already have a survey with this name." in response.content.decode()
    assert Survey.objects.get(pk=draft.pk).contexts_per_hit == 3


def test_a_launched_survey_cannot_be_edited_and_its_page_says_why(researcher_client, draft):
    services.survey_launch(survey=draft)
    page = researcher_client.get(reverse("annotation:survey_detail", args=[draft.pk])).content.decode()
    assert 'id="edit-survey"' not in page and 'id="edit-survey-why"' in page
    url = reverse("annotation:survey_edit", args=[draft.pk])
    html = researcher_client.get(url).content.decode()
    assert "edit-refused" in html and "was launched on" in html and "save-draft" not in html
    response = researcher_client.post(url, edit_fields(draft, contexts_per_hit=1))
    assert response.status_code == 409
    assert Survey.objects.get(pk=draft.pk).contexts_per_hit == 3
    with pytest.raises(services.SurveyError, match="was launched on"):
        survey_edit(survey=draft, name="x", contexts_per_hit=1)
    # paused, closed and reopened: launched once, fixed for good
    services.survey_close(survey=draft)
    services.survey_reopen(survey=draft)
    assert "was launched on" in researcher_client.get(url).content.decode()


def test_another_researcher_and_staff_get_a_404(draft, other_researcher, admin_user):
    url = reverse("annotation:survey_edit", args=[draft.pk])
    for user in (other_researcher, admin_user):
        client = Client()
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.post(url, edit_fields(draft, contexts_per_hit=1)).status_code == 404
    assert Survey.objects.get(pk=draft.pk).contexts_per_hit == 3


def test_a_bws_draft_changes_its_tuple_size(researcher_client, researcher):
    survey = make_survey(researcher, name="bws-draft", launch=False, task_type="bws", attention_checks_per_hit=0)
    url = reverse("annotation:survey_edit", args=[survey.pk])
    fields = survey_form_fields(survey.dataset, name="bws-draft", provider="local", task_type="bws", tuple_size=3)
    fields["question"] = ""
    response = researcher_client.post(url, fields)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Survey.objects.get(pk=survey.pk).tuple_size == 3
