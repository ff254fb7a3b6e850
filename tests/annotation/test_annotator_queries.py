"""The annotator's hot path stays a handful of queries (the benchmark's 50 annotators depend on it)."""

import re

import pytest
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Rating
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


def test_link_page_submit_and_next_hit_take_few_queries(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator, other = Client(), Client()
    # Someone else opens the HIT first, as under load: its item HTML is then cached.
    other.get(f"/s/{survey.token}/?worker=first")

    page, page_sql = _queries(lambda: annotator.get(f"/s/{survey.token}/?worker=w1"))
    html = page.content.decode()
    url = ACTION_RE.search(html).group(1)
    submit, submit_sql = _queries(lambda: annotator.post(url, _answers(html)))
    Client().get(f"/s/{survey.token}/?worker=second")  # opens HIT 2 before w1 comes back to it
    again, again_sql = _queries(lambda: annotator.get(f"/s/{survey.token}/"))

    # The link answers with the HIT page itself: no redirect, no second request to read it all again.
    assert page.status_code == 200 and "HIT 1 of at most" in html
    assert submit.status_code == 302 and submit.headers["Location"].endswith("/done/")
    assert again.status_code == 200 and "HIT 2 of at most" in again.content.decode()
    # A new annotator: survey by link, their row inserted (its id returned), a candidate slot, the flip.
    assert len(page_sql) <= 4, page_sql
    # Assignment (no progress count), items, scales, the flip and two inserts; nothing read back.
    assert len(submit_sql) <= 6, submit_sql
    # A returning one: survey, the insert that finds them, their row locked, their HITs, a slot, the flip.
    assert len(again_sql) <= 6, again_sql


def test_hit_address_still_shows_the_page_in_one_query(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator = Client()
    url = ACTION_RE.search(annotator.get(f"/s/{survey.token}/?worker=w1").content.decode()).group(1)
    page, page_sql = _queries(lambda: annotator.get(url))
    assert page.status_code == 200 and "HIT 1 of at most" in page.content.decode()
    assert len(page_sql) == 1, page_sql  # assignment, survey, annotator and progress in one; items cached


def test_annotators_need_no_session_and_csrf_still_guards_the_submit(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator = Client(enforce_csrf_checks=True)
    page = annotator.get(f"/s/{survey.token}/?worker=w1")
    html = page.content.decode()
    url = ACTION_RE.search(html).group(1)
    # Identity lives in the signed worker cookie, CSRF in its own cookie: no session row, no session cookie.
    assert "ratelab_worker" in page.cookies and "csrftoken" in page.cookies
    assert "sessionid" not in page.cookies and not Session.objects.exists()

    forged = annotator.post(url, _answers(html))
    assert forged.status_code == 403 and not Rating.objects.exists(), "a post without the CSRF token is refused"
    stranger = Client(enforce_csrf_checks=True)
    stranger.get(f"/s/{survey.token}/?worker=w2")
    token = CSRF_RE.search(html).group(1)
    assert stranger.post(url, {**_answers(html), "csrfmiddlewaretoken": token}).status_code == 403, "not their HIT"

    submit = annotator.post(url, {**_answers(html), "csrfmiddlewaretoken": token})
    assert submit.status_code == 302 and submit.headers["Location"].endswith("/done/")
    assert Rating.objects.filter(annotator__worker_id="w1").exists() and not Session.objects.exists()
