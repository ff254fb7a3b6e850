"""The annotator's hot path stays a handful of queries (the benchmark's 50 annotators depend on it)."""

import re

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import HITItem, Rating
from annotation.views.task_page.stored import hit_pages_render
from tests.annotation.link_helpers import start_task, started_task
from tests.annotation.live_annotator import ACTION_RE, CHECK_RE, CSRF_RE, FIELD_RE
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _queries(action):
    with CaptureQueriesContext(connection) as captured:
        response = action()
    # Transaction control is not a query the ORM could have saved.
    return response, [q["sql"] for q in captured if not re.match(r"^(BEGIN|COMMIT|SAVEPOINT|RELEASE)", q["sql"])]


def _answers(html):
    checks = dict(CHECK_RE.findall(html))
    return {name: checks.get(name.split("-")[1], "3") for name in set(FIELD_RE.findall(html))}


def test_start_task_page_submit_and_next_task_take_few_queries(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator, other = Client(), Client()
    # Someone else comes first, as under load: the start page's facts and the HIT's item HTML are cached.
    other.get(f"/s/{survey.token}/")
    other.get(start_task(other, survey, "first"))
    hit_pages_render(survey=survey)  # as the launch's task leaves them (on_commit never runs in this test)

    start_page, start_page_sql = _queries(lambda: annotator.get(f"/s/{survey.token}/"))
    start, start_sql = _queries(lambda: annotator.post(f"/s/{survey.token}/", {"action": "start", "worker": "w1"}))
    html = start.content.decode()  # Start answers with the task's page itself
    url = ACTION_RE.search(html).group(1)
    page, page_sql = _queries(lambda: annotator.get(url))  # a reload, at the address task.js shows
    submit, submit_sql = _queries(lambda: annotator.post(url, _answers(html)))
    Client().post(f"/s/{survey.token}/", {"action": "start", "worker": "second"})  # takes HIT 2 before w1 is back
    again, again_sql = _queries(lambda: annotator.post(f"/s/{survey.token}/", {"action": "start"}))

    assert start_page.status_code == 200 and start.status_code == 200 and "Task 1 of at most" in html
    assert page.status_code == 200 and "Task 1 of at most" in page.content.decode()
    assert submit.status_code == 302 and submit.headers["Location"].endswith("/done/")
    assert again.status_code == 200 and "Task 2 of at most" in again.content.decode()
    # The start page: the survey by link; its facts are cached after the first visitor; no claim.
    assert len(start_page_sql) <= 1, start_page_sql
    # A new identity and its first task in one transaction: the survey, the newcomers' lock
    # (PostgreSQL), the start code's identity and the address's newcomers in one read, two inserts,
    # the slot taken (PostgreSQL: with its HIT's stored page in one statement; SQLite: the
    # candidates, the flip, the page).
    assert len(start_sql) <= 6, start_sql
    # The task page: assignment, survey, annotator and progress in one; items cached.
    assert len(page_sql) <= 2, page_sql
    # Assignment (no progress count), items, scales, the flip and two inserts; nothing read back.
    assert len(submit_sql) <= 6, submit_sql
    # A returning one: survey, the insert that finds them, their row locked, their HITs, the HITs that
    # would repeat a check, the slot taken with its stored page (SQLite: the candidates and the flip
    # apart, and the page read after).
    assert len(again_sql) <= (6 if connection.vendor == "postgresql" else 7), again_sql


def test_hit_address_still_shows_the_page_in_one_query(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator = Client()
    url = start_task(annotator, survey, "w1")
    annotator.get(url)
    page, page_sql = _queries(lambda: annotator.get(url))
    assert page.status_code == 200 and "Task 1 of at most" in page.content.decode()
    assert len(page_sql) == 1, page_sql  # assignment, survey, annotator and progress in one; items cached


def test_annotators_need_no_session_and_csrf_still_guards_the_submit(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator = Client(enforce_csrf_checks=True)
    start_page = annotator.get(f"/s/{survey.token}/")
    assert "csrftoken" in start_page.cookies and "ratelab_worker" not in start_page.cookies, "a GET makes no identity"
    csrf = CSRF_RE.search(start_page.content.decode()).group(1)
    assert annotator.post(f"/s/{survey.token}/", {"action": "start"}).status_code == 403, "Start needs the token"
    started = annotator.post(f"/s/{survey.token}/", {"action": "start", "csrfmiddlewaretoken": csrf})
    page = annotator.get(started_task(started))
    html = page.content.decode()
    url = ACTION_RE.search(html).group(1)
    # Identity lives in the signed worker cookie, CSRF in its own cookie: no session row, no session cookie.
    assert "ratelab_worker" in started.cookies and "csrftoken" in annotator.cookies
    assert "sessionid" not in page.cookies and not Session.objects.exists()

    forged = annotator.post(url, _answers(html))
    assert forged.status_code == 403 and not Rating.objects.exists(), "a post without the CSRF token is refused"
    stranger = Client(enforce_csrf_checks=True)
    stranger_csrf = CSRF_RE.search(stranger.get(f"/s/{survey.token}/").content.decode()).group(1)
    stranger.post(f"/s/{survey.token}/", {"action": "start", "csrfmiddlewaretoken": stranger_csrf})
    token = CSRF_RE.search(html).group(1)
    assert stranger.post(url, {**_answers(html), "csrfmiddlewaretoken": token}).status_code == 403, "not their HIT"

    submit = annotator.post(url, {**_answers(html), "csrfmiddlewaretoken": token})
    assert submit.status_code == 302 and submit.headers["Location"].endswith("/done/")
    stored = Rating.objects.filter(annotator__worker_id__startswith="anon-")
    # every real reply's answer is stored; the check's block (its reply and fillers) is checked, not kept
    real = stored.first().assignment.hit.items.filter(kind=HITItem.Kind.RESPONSE).count()
    assert stored.count() == real and real < len(_answers(html))
    assert not Session.objects.exists()


def test_submit_and_next_is_one_request_of_few_queries(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator, other = Client(), Client()
    other.get(start_task(other, survey, "first"))  # someone came first: the HITs' item HTML is cached
    page = annotator.get(start_task(annotator, survey, "w1"))
    html = page.content.decode()
    hit_pages_render(survey=survey)  # every HIT's page stored, whichever comes next

    following, sql = _queries(
        lambda: annotator.post(ACTION_RE.search(html).group(1), {**_answers(html), "then": "next"})
    )

    assert following.status_code == 200 and "Task 2 of at most" in following.content.decode()
    # The submission as above (assignment, items, scales, the flip, the ratings, the check's answer),
    # then the claim: their row locked, their HITs, the HITs that would repeat a check, the slot taken;
    # the next page's items are cached, the survey's HITs counted ("of at most"). SQLite: the insert that
    # finds their row first (its write lock) and the candidates read apart from the flip.
    assert len(sql) <= (11 if connection.vendor == "postgresql" else 13), sql
