"""A completion code is earned by work handed in: the way back to a platform (Prolific's
`/p/<token>/finish/`, a link platform's `/l/<token>/finish/`) gives it to no one who has only
started, whatever URL they type."""

import pytest
from django.test import Client

from annotation.crowd.link_platform import platform_settings
from annotation.models import LinkPlatform, ProlificStudy, Survey
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import do_task, entry, make_prolific_survey, pid, publish, session

COMPLETE = "https://connect.example.org/complete?code={code}"


@pytest.fixture
def prolific_survey(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    return survey


@pytest.fixture
def link_survey(researcher):
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    return survey


def test_a_prolific_participant_who_only_started_gets_no_completion_code_by_typing_the_finish_url(prolific_survey):
    worker = Client()
    started = entry(worker, prolific_survey, participant=pid(1), session_id=session(1))
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    code = ProlificStudy.objects.get(survey=prolific_survey).completed_code
    finish = worker.get(f"/p/{prolific_survey.token}/finish/")
    assert finish.status_code == 403
    assert code not in finish.content.decode() and code not in finish.get("Location", "")
    assert b"return" in finish.content
    do_task(worker, started)
    assert worker.get(f"/p/{prolific_survey.token}/finish/")["Location"].endswith(f"cc={code}")


def test_a_link_participant_who_only_started_gets_no_completion_code(link_survey):
    worker = Client()
    started = worker.post(f"/l/{link_survey.token}/", {"workerId": "W1"})
    assert started["Location"].startswith("/a/")
    code = LinkPlatform.objects.get(survey=link_survey).completion_code
    finish = worker.get(f"/l/{link_survey.token}/finish/")
    assert finish.status_code == 403 and code not in finish.get("Location", "")
    do_task(worker, started)
    assert f"complete?code={code}" in worker.get(f"/l/{link_survey.token}/finish/").content.decode()


def test_a_link_participant_who_found_the_study_full_is_not_offered_the_code(researcher):
    survey = make_survey(researcher, n_hits=1, assignments=1, name="one-place")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    first = Client()
    do_task(first, first.post(f"/l/{survey.token}/", {"workerId": "W1"}))
    late = Client()
    page = late.post(f"/l/{survey.token}/", {"workerId": "W2"})
    assert page.status_code == 200 and "/finish/" not in page.content.decode()
    assert late.get(f"/l/{survey.token}/finish/").status_code == 403
    again = first.post(f"/l/{survey.token}/", {"workerId": "W1"}).content.decode()
    assert "/finish/" in again
