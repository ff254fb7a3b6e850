"""The identity cookie a link platform or Prolific entry sets proves only that this browser started
that survey under that id: any id can be typed into another survey's link, so a cookie made there
must not hand over someone's task here (another survey, another platform or the built-in link)."""

import pytest
from django.test import Client

from annotation.crowd.link_platform import platform_settings
from annotation.models import Assignment, Survey
from tests.annotation.link_helpers import started_task
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import do_task, entry, make_prolific_survey, pid, publish, session

COMPLETE = "https://connect.example.org/complete?code={code}"


def link_survey(owner, name):
    survey = make_survey(owner, n_hits=2, assignments=2, name=name)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    return survey


def victims_task(survey, worker_id):
    return Assignment.objects.get(hit__survey=survey, annotator__worker_id=worker_id, status="active").token


def test_a_cookie_made_on_another_link_survey_does_not_hand_over_a_started_participants_task(researcher):
    target, other = link_survey(researcher, "target"), link_survey(researcher, "other")
    victim = Client()
    assert victim.post(f"/l/{target.token}/", {"workerId": "W1"})["Location"].startswith("/a/")
    token = victims_task(target, "W1")
    attacker = Client()
    attacker.post(f"/l/{other.token}/", {"workerId": "W1"})  # W1 never started here: accepted
    taken = attacker.post(f"/l/{target.token}/", {"workerId": "W1"})
    assert taken.status_code == 409 and token not in taken.get("Location", "")
    assert attacker.get(f"/a/{token}/").status_code == 403
    assert victim.get(f"/a/{token}/").status_code == 200


def test_a_cookie_made_on_a_link_survey_does_not_hand_over_a_prolific_participants_task(researcher, api):
    target = make_prolific_survey(researcher)
    publish(api, target)
    other = link_survey(researcher, "other")
    victim = Client()
    assert entry(victim, target, participant=pid(1), session_id=session(1))["Location"].startswith("/a/")
    token = victims_task(target, pid(1))
    attacker = Client()
    attacker.post(f"/l/{other.token}/", {"workerId": pid(1)})
    taken = attacker.post(f"/p/{target.token}/", {})  # no parameters: the browser's identity decides
    assert token not in taken.get("Location", "") and attacker.get(f"/a/{token}/").status_code == 403
    finish = attacker.get(f"/p/{target.token}/finish/")
    assert finish.status_code == 403


def test_a_cookie_made_on_another_prolific_study_does_not_hand_over_a_participants_task(researcher, api):
    target = make_prolific_survey(researcher, name="target")
    publish(api, target)
    victim = Client()
    entry(victim, target, participant=pid(1), session_id=session(1))
    token = victims_task(target, pid(1))
    other = make_prolific_survey(researcher, name="other")
    study = other.prolific
    study.study_id = "b" * 24
    study.status = "ACTIVE"
    study.save()
    Survey.objects.filter(pk=other.pk).update(status=Survey.Status.LIVE)
    attacker = Client()
    entry(attacker, other, participant=pid(1), session_id=session(2), study="b" * 24)
    taken = attacker.post(f"/p/{target.token}/", {})
    assert token not in taken.get("Location", "") and attacker.get(f"/a/{token}/").status_code == 403


def test_a_cookie_made_on_a_link_survey_is_no_identity_on_the_built_in_link(researcher):
    local = make_survey(researcher, n_hits=2, assignments=2, name="local")
    Survey.objects.filter(pk=local.pk).update(provider=Survey.Provider.LOCAL)
    victim = Client()
    started = victim.post(f"/s/{local.token}/", {"action": "start", "worker": "alice"})
    assert started_task(started).startswith("/a/")
    token = victims_task(local, "alice")
    attacker = Client()
    attacker.post(f"/l/{link_survey(researcher, 'other').token}/", {"workerId": "alice"})
    taken = attacker.post(f"/s/{local.token}/", {"action": "start"})
    assert token not in taken.get("Location", "") and attacker.get(f"/a/{token}/").status_code == 403


@pytest.mark.parametrize("kind", ["link", "prolific"])
def test_the_participant_keeps_their_task_and_code_in_the_browser_that_started(researcher, api, kind):
    if kind == "link":
        survey = link_survey(researcher, "target")
        worker = Client()
        started = worker.post(f"/l/{survey.token}/", {"workerId": "W1"})
        again = worker.post(f"/l/{survey.token}/", {})
    else:
        survey = make_prolific_survey(researcher)
        publish(api, survey)
        worker = Client()
        started = entry(worker, survey, participant=pid(1), session_id=session(1))
        again = worker.post(f"/p/{survey.token}/", {})
    assert again["Location"] == started["Location"]
    do_task(worker, started)
    prefix = "l" if kind == "link" else "p"
    # Prolific's way back is a redirect; a link platform's shows the code first (F13).
    assert worker.get(f"/{prefix}/{survey.token}/finish/").status_code == (200 if kind == "link" else 302)
