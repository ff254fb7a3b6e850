"""Start answers with the task's page itself (issue 37): one request instead of a redirect and a GET,
and for a newcomer the identity and the first task in one transaction (one commit)."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotator, Assignment, LinkIdentity
from tests.annotation.link_helpers import started_task
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db

RESUME_RE = re.compile(r"Your resume code: <strong>([a-z0-9-]+)</strong>")


def test_start_answers_with_the_task_page_its_cookie_and_resume_code(researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    browser = Client()
    browser.get(f"/s/{survey.token}/")
    started = browser.post(f"/s/{survey.token}/", {"action": "start", "worker": "ada"})
    url = started_task(started)
    held = Assignment.objects.get(status=Assignment.Status.ACTIVE)
    assert url == f"/a/{held.token}/" and held.annotator.worker_id == "ada"
    html = started.content.decode()
    assert "Task 1 of at most" in html and "ratelab_worker" in started.cookies
    # The code on the page is the new identity's, though the request carried no identity cookie yet.
    code = RESUME_RE.search(html).group(1)
    resumed = Client()
    resumed.post(f"/s/{survey.token}/", {"action": "resume", "resume_code": code})
    assert resumed.get(url).status_code == 200
    # A reload of the answer without the script posts Start again: the same task, no second claim.
    again = browser.post(f"/s/{survey.token}/", {"action": "start"})
    assert started_task(again) == url and Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1
    # The page at the task's own address (what task.js puts in the address bar) is the same task.
    assert "Task 1 of at most" in browser.get(url).content.decode()


def test_a_newcomers_identity_and_first_task_are_one_commit(researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    with CaptureQueriesContext(connection) as captured:
        started = Client().post(f"/s/{survey.token}/", {"action": "start", "worker": "bo"})
    started_task(started)
    # One transaction: one end (a COMMIT; inside the test's own transaction, a savepoint's RELEASE),
    # and no savepoint within it.
    statements = [q["sql"].upper() for q in captured]
    ends = [sql for sql in statements if sql.startswith(("COMMIT", "RELEASE"))]
    assert len(ends) == 1 and sum(sql.startswith("SAVEPOINT") for sql in statements) <= 1, statements
    assert Annotator.objects.filter(worker_id="bo").count() == 1 and LinkIdentity.objects.count() == 1


def test_a_newcomer_with_no_task_left_keeps_the_identity_and_is_told_why(researcher):
    survey = make_survey(researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=1)  # one slot
    started_task(Client().post(f"/s/{survey.token}/", {"action": "start", "worker": "first"}))
    late = Client()
    answer = late.post(f"/s/{survey.token}/", {"action": "start", "worker": "late"})
    assert answer.status_code == 200 and 'id="task-form"' not in answer.content.decode()
    assert "ratelab_worker" in answer.cookies  # they return with it when a slot frees
    assert Annotator.objects.filter(worker_id="late").exists()
    assert not Assignment.objects.filter(annotator__worker_id="late").exists()


def test_a_taken_label_is_refused_and_nothing_is_made(researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    started_task(Client().post(f"/s/{survey.token}/", {"action": "start", "worker": "cy"}))
    refused = Client().post(f"/s/{survey.token}/", {"action": "start", "worker": "cy"})
    assert refused.status_code == 400 and "already in use" in refused.content.decode()
    assert LinkIdentity.objects.count() == 1 and Assignment.objects.filter(status="active").count() == 1
