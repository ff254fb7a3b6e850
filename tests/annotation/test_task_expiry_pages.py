"""What an annotator whose task ran out of time is told: the task page says it expired (rather
than being shown, worked on and refused), offers a new task, and an old link whose task went
back to the pool says so instead of "No such study"."""

import datetime
import re

import pytest
from django.test import Client
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, Rating
from tests.annotation.link_helpers import start_task, started_task
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _fill(html):
    return dict.fromkeys(set(re.findall(r'name="(score-\d+-[\w-]+)"', html)), "3")


def _started(survey):
    client = Client()
    url = start_task(client, survey, "slow-1")
    return client, url, Assignment.objects.get(token=url.strip("/").rsplit("/", 1)[-1])


def _past_deadline(assignment):
    Assignment.objects.filter(pk=assignment.pk).update(expires_at=timezone.now() - datetime.timedelta(minutes=1))


def test_a_task_past_its_deadline_says_it_expired_and_offers_a_new_one(researcher):
    survey = make_survey(researcher, assignment_minutes=30)
    client, url, assignment = _started(survey)
    answers = _fill(client.get(url).content.decode())
    _past_deadline(assignment)

    shown = client.get(url)
    page = shown.content.decode()
    assert shown.status_code == 200 and "This task has expired" in page and "30 minutes" in page
    assert "score-" not in page, "no task to work on for nothing"
    assert f'action="/s/{survey.token}/"' in page and "Start a new task" in page

    late = client.post(url, answers)
    assert late.status_code == 409 and "This task has expired" in late.content.decode()
    assert not Rating.objects.exists()

    again = start_task(client, survey)
    assert client.get(again).status_code == 200 and "score-" in client.get(again).content.decode()
    assert not Assignment.objects.filter(token=url.strip("/").rsplit("/", 1)[-1]).exists(), "the old link is gone"


def test_a_closed_study_offers_no_new_task_on_the_expired_page(researcher):
    survey = make_survey(researcher)
    client, url, assignment = _started(survey)
    _past_deadline(assignment)
    services.survey_pause(survey=survey)
    page = client.get(url).content.decode()
    assert "This task has expired" in page and "Start a new task" not in page
    assert "not handing out new tasks" in page


def test_an_old_link_of_a_task_returned_to_the_pool_says_no_such_task(researcher, settings):
    settings.DEBUG = False
    survey = make_survey(researcher)
    client, url, assignment = _started(survey)
    _past_deadline(assignment)
    services.assignments_expire()
    for response in (client.get(url), client.post(url, {})):
        page = response.content.decode()
        assert response.status_code == 404 and "<h1>No such task.</h1>" in page
        assert "goes back to the" in page and "No such study" not in page


@pytest.mark.parametrize("path", ["/l/not-a-real-token/", "/p/not-a-real-token/", "/a/nothing/done/"])
def test_a_bad_platform_or_task_link_shows_no_researcher_frame(client, settings, path):
    settings.DEBUG = False
    response = client.get(path)
    page = response.content.decode()
    assert response.status_code == 404 and '<nav aria-label="Main">' not in page and "Log in" not in page


def test_the_thank_you_address_of_a_task_not_handed_in_leads_back_to_the_task(researcher):
    # it said "Your answers to this task are saved" and dropped the answers the browser kept
    survey = make_survey(researcher)
    client, url, _assignment = _started(survey)
    early = client.get(f"{url}done/")
    assert early.status_code == 302 and early["Location"] == url
    client.post(url, _fill(client.get(url).content.decode()))
    assert "Your answers to this task are saved" in client.get(f"{url}done/").content.decode()


def test_a_csrf_failure_on_an_expired_task_says_it_expired_not_press_submit_again(researcher):
    survey = make_survey(researcher)
    client = Client(enforce_csrf_checks=True)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', client.get(f"/s/{survey.token}/").content.decode())
    url = started_task(client.post(f"/s/{survey.token}/", {"action": "start", "csrfmiddlewaretoken": csrf.group(1)}))
    answers = _fill(client.get(url).content.decode())
    _past_deadline(Assignment.objects.get(token=url.strip("/").rsplit("/", 1)[-1]))
    refused = client.post(url, {**answers, "csrfmiddlewaretoken": "x" * 64})
    page = refused.content.decode()
    assert refused.status_code == 409 and "This task has expired" in page and "press Submit again" not in page
    assert not Rating.objects.exists()
