"""The link platform page's settings form (F32): a refusal is shown at the page's own address with
what was typed, and the saved message says what changed."""

import pytest
from django.urls import reverse

from annotation.crowd.link_platform import platform_settings
from annotation.models import LinkPlatform, Survey
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db

GOOD = "https://connect.example.org/complete?code={code}"


@pytest.fixture
def survey(researcher):
    survey = make_survey(researcher, name="walk-link", provider=Survey.Provider.LINK, launch=False)
    platform_settings(survey)
    return survey


def test_the_settings_form_posts_to_the_page_itself(researcher_client, survey):
    page_url = reverse("annotation:link_survey", args=[survey.pk])
    page = researcher_client.get(page_url).content.decode()
    assert f'<form method="post" action="{page_url}" class="link-settings-form">' in page


def test_a_completion_url_without_code_is_shown_again_at_the_page_with_200_and_nothing_saved(researcher_client, survey):
    page_url = reverse("annotation:link_survey", args=[survey.pk])
    bad = "https://connect.example.org/complete"
    response = researcher_client.post(page_url, {"participant_param": "participant_id", "completion_url": bad})
    assert response.status_code == 200 and response.request["PATH_INFO"] == page_url
    body = response.content.decode()
    assert 'id="settings-error"' in body and "{code}" in body
    assert f'value="{bad}"' in body  # what was typed, to correct
    assert LinkPlatform.objects.get(survey=survey).completion_url == ""


def test_saving_only_the_completion_url_says_so(researcher_client, survey):
    page_url = reverse("annotation:link_survey", args=[survey.pk])
    saved = researcher_client.post(page_url, {"participant_param": "participant_id", "completion_url": GOOD})
    assert saved.status_code == 302 and saved["Location"] == page_url
    body = researcher_client.get(page_url).content.decode()
    assert "Saved the completion URL" in body and "The study URL is unchanged" in body
    assert "give the platform the new study URL" not in body
    assert LinkPlatform.objects.get(survey=survey).completion_url == GOOD


def test_saving_a_new_parameter_says_the_study_url_changed(researcher_client, survey):
    page_url = reverse("annotation:link_survey", args=[survey.pk])
    platform_settings(survey)
    LinkPlatform.objects.filter(survey=survey).update(completion_url=GOOD)
    researcher_client.post(page_url, {"participant_param": "workerId", "completion_url": GOOD})
    body = researcher_client.get(page_url).content.decode()
    assert "Saved the participant id parameter: give the platform the new study URL." in body


def test_another_researcher_cannot_post_the_settings(client, other_researcher, survey):
    client.force_login(other_researcher)
    url = reverse("annotation:link_survey", args=[survey.pk])
    assert client.post(url, {"participant_param": "x", "completion_url": GOOD}).status_code == 404
    assert LinkPlatform.objects.get(survey=survey).completion_url == ""
