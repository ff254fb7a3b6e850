"""A platform's entry page (a link-and-code platform's `/l/`, Prolific's `/p/`). Two tabs: the tab
whose CSRF cookie was replaced by the other's gets the entry page again, saying why and with a
Start that works now, as on the survey's own link; not Django's bare "CSRF verification failed".
The researcher's instructions keep their paragraphs, as on the survey's own start page."""

import re

import pytest
from django.test import Client

from annotation.crowd.link_platform import platform_settings
from annotation.models import Annotator, Assignment, LinkParticipant, ProlificSubmission, Survey
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import STUDY_ID, api, make_prolific_survey, pid, prolific_env, publish, session

__all__ = ["api", "prolific_env"]  # fixtures

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
STALE = "z" * 64  # the token of the tab whose cookie the other tab replaced


@pytest.fixture
def link_survey(researcher):
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url="https://connect.example.org/c?code={code}")
    return survey


def test_a_stale_start_on_a_link_platform_entry_shows_the_page_again_and_records_nobody(link_survey):
    annotator = Client(enforce_csrf_checks=True)
    url = f"/l/{link_survey.token}/"
    annotator.get(url, {"workerId": "W1"})
    refused = annotator.post(url, {"workerId": "W1", "csrfmiddlewaretoken": STALE})
    page = refused.content.decode()
    assert refused.status_code == 403 and "open in another tab" in page and "press the button again" in page
    assert 'name="workerId" value="W1"' in page, "the Start button still names the participant"
    assert not LinkParticipant.objects.exists() and not Annotator.objects.exists()

    started = annotator.post(url, {"workerId": "W1", "csrfmiddlewaretoken": CSRF.search(page).group(1)})
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    assert Assignment.objects.get(status=Assignment.Status.ACTIVE).annotator.worker_id == "W1"


def test_a_stale_start_on_the_prolific_entry_shows_the_page_again_and_records_no_session(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    annotator = Client(enforce_csrf_checks=True)
    params = {"PROLIFIC_PID": pid(1), "STUDY_ID": STUDY_ID, "SESSION_ID": session(1)}
    url = f"/p/{survey.token}/"
    annotator.get(url, params)
    refused = annotator.post(url, {**params, "csrfmiddlewaretoken": STALE})
    page = refused.content.decode()
    assert refused.status_code == 403 and "open in another tab" in page and "press the button again" in page
    assert f'name="SESSION_ID" value="{session(1)}"' in page, "the Start button still carries the session"
    assert not ProlificSubmission.objects.exists()

    started = annotator.post(url, {**params, "csrfmiddlewaretoken": CSRF.search(page).group(1)})
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    assert ProlificSubmission.objects.get().participant_id == pid(1)


def test_a_stale_start_with_a_malformed_participant_still_names_the_parameter(link_survey):
    annotator = Client(enforce_csrf_checks=True)
    annotator.get(f"/l/{link_survey.token}/", {"workerId": "W1"})
    refused = annotator.post(f"/l/{link_survey.token}/", {"workerId": "<b>", "csrfmiddlewaretoken": STALE})
    assert refused.status_code == 400 and b"malformed workerId" in refused.content


def test_the_link_platform_entry_keeps_the_instructions_paragraphs(link_survey):
    Survey.objects.filter(pk=link_survey.pk).update(instructions="Read each conversation.\n\nThen rate every reply.")
    page = Client().get(f"/l/{link_survey.token}/", {"workerId": "W1"}).content.decode()
    assert "<p>Read each conversation.</p>" in page and "<p>Then rate every reply.</p>" in page


def test_the_prolific_entry_keeps_the_instructions_paragraphs(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    Survey.objects.filter(pk=survey.pk).update(instructions="Read each conversation.\n\nThen rate every reply.")
    params = {"PROLIFIC_PID": pid(1), "STUDY_ID": STUDY_ID, "SESSION_ID": session(1)}
    page = Client().get(f"/p/{survey.token}/", params).content.decode()
    assert "<p>Read each conversation.</p>" in page and "<p>Then rate every reply.</p>" in page
