"""The annotator's hot path stays a handful of queries (the benchmark's 50 annotators depend on it)."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.annotation.live_annotator import CHECK_RE, FIELD_RE
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def _queries(action):
    with CaptureQueriesContext(connection) as captured:
        response = action()
    # Transaction control is not a query the ORM could have saved.
    return response, [q["sql"] for q in captured if not re.match(r"^(BEGIN|COMMIT|SAVEPOINT|RELEASE)", q["sql"])]


def test_claim_page_and_submit_take_few_queries(researcher):
    survey = make_survey(researcher, contexts_per_hit=5, assignments_per_hit=2)
    annotator, other = Client(), Client()
    # Someone else opens the HIT first, as under load: its item HTML is then cached.
    other.get(other.get(f"/s/{survey.token}/?worker=first").headers["Location"])

    claim, claim_sql = _queries(lambda: annotator.get(f"/s/{survey.token}/?worker=w1"))
    url = claim.headers["Location"]
    page, page_sql = _queries(lambda: annotator.get(url))
    html = page.content.decode()
    checks = dict(CHECK_RE.findall(html))
    data = {name: checks.get(name.split("-")[1], "3") for name in set(FIELD_RE.findall(html))}
    submit, submit_sql = _queries(lambda: annotator.post(url, data))

    assert submit.status_code == 302 and submit.headers["Location"].endswith("/done/")
    # Survey by link, survey again (fresh status), annotator (a new one: not found, inserted, read
    # again), their HITs, a candidate slot, the flip.
    assert len(claim_sql) <= 8, claim_sql
    assert len(page_sql) == 1, page_sql  # assignment, survey, annotator and progress in one; items cached
    # Assignment, items, scales, the flip and three inserts; nothing read back afterwards.
    assert len(submit_sql) <= 6, submit_sql
