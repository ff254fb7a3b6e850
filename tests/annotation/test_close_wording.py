"""What the Close survey… page says happens, for drafts and live surveys on each provider (F27)."""

import pytest
from django.urls import reverse

from annotation.models import MTurkHIT, ProlificStudy, Survey
from tests.annotation import mturk_helpers
from tests.annotation.prolific_helpers import make_prolific_survey
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def close_page(client, survey):
    return client.get(reverse("annotation:survey_action", args=[survey.pk, "close"])).content.decode()


def as_draft(survey):
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    survey.refresh_from_db()
    return survey


def test_a_prolific_draft_never_published_says_no_study_exists_there(client, researcher):
    survey = as_draft(make_prolific_survey(researcher))
    client.force_login(researcher)
    page = close_page(client, survey)
    assert "No study exists on Prolific for it" in page and "never launched" in page
    assert "expired on Prolific" not in page


def test_a_published_prolific_study_is_said_to_be_stopped(client, researcher):
    survey = make_prolific_survey(researcher)
    ProlificStudy.objects.filter(survey=survey).update(study_id="60aca280709ee40ec37d4885", status="ACTIVE")
    Survey.objects.filter(pk=survey.pk).update(launched_at="2026-11-28T10:00:00Z")
    client.force_login(researcher)
    page = close_page(client, survey)
    assert "Its study on Prolific (60aca280709ee40ec37d4885) is stopped" in page
    assert "No study exists" not in page and "never launched" not in page


def test_an_mturk_draft_with_no_published_hit_says_nothing_is_sent(client, researcher):
    survey = as_draft(mturk_helpers.make_survey(researcher, status=Survey.Status.DRAFT))
    assert not MTurkHIT.objects.filter(hit__survey=survey).exists()
    client.force_login(researcher)
    page = close_page(client, survey)
    assert "None of its HITs is on Amazon Mechanical Turk: nothing is sent there." in page
    assert "expired on" not in page


def test_a_link_survey_says_the_platform_is_the_researchers_to_stop(client, researcher):
    live = make_survey(researcher, name="live-link", provider=Survey.Provider.LINK)
    draft = make_survey(researcher, name="draft-link", provider=Survey.Provider.LINK, launch=False)
    client.force_login(researcher)
    page = close_page(client, live)
    assert "Stop the study on the platform too: RateLab cannot reach it." in page and "expired on" not in page
    page = close_page(client, draft)
    assert "never launched" in page and "If you gave the platform its study URL" in page
    assert "expired on" not in page


def test_a_local_draft_says_it_comes_back_a_draft(client, researcher):
    survey = make_survey(researcher, name="local-draft", launch=False)
    client.force_login(researcher)
    page = close_page(client, survey)
    assert "never launched" in page and "comes back a draft" in page
