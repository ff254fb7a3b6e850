"""Work MTurk has not confirmed is marked as such on every page and in every ratings export."""

import csv
import io
import json

import pytest
from botocore.stub import ANY
from django.urls import reverse

from annotation.crowd.mturk.provider import MTurkProvider
from annotation.importing.ratings import parse_ratings
from annotation.kinds.rating.exporting import ratings_export
from annotation.models import Annotator
from annotation.quality.selectors import survey_quality
from annotation.services import mturk as services
from annotation.services.assignments import assignment_submit
from tests.annotation.mturk_helpers import HIT_TYPE_ID, assignment_shape, hit_id, make_survey, publish_all


def _submit(hit, *, assignment, worker):
    slot = services.mturk_assignment_open(hit=hit, assignment_id=assignment, worker_id=worker)
    answers = {item.pk: {"scores": {"overall": 2 if item.kind == "instructed" else 4}} for item in hit.items.all()}
    assignment_submit(assignment=slot, answers=answers)
    return slot


@pytest.fixture
def survey(stubber, researcher):
    """AREALWORKER's work is confirmed by a sync; AFORGEDWORKER's (a typed URL) is not."""
    survey = make_survey(researcher, n_hits=2, assignments=2)
    publish_all(stubber, survey)
    _submit(survey.hits.get(position=0), assignment="3ASGREAL", worker="AREALWORKER")
    _submit(survey.hits.get(position=1), assignment="3FORGED", worker="AFORGEDWORKER")
    listed = {**assignment_shape(0, hit=hit_id(0), worker="AREALWORKER"), "AssignmentId": "3ASGREAL"}
    stubber.add_response(
        "list_reviewable_hits",
        {"NumResults": 0, "HITs": []},
        {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100},
    )
    stubber.add_response(
        "list_assignments_for_hit",
        {"NumResults": 1, "Assignments": [listed]},
        {"HITId": hit_id(0), "AssignmentStatuses": ANY, "MaxResults": 100},
    )
    stubber.add_response(
        "list_assignments_for_hit",
        {"NumResults": 0, "Assignments": []},
        {"HITId": hit_id(1), "AssignmentStatuses": ANY, "MaxResults": 100},
    )
    assert MTurkProvider(sandbox=True).sync(survey=survey)["confirmed"] == 1
    return survey


def test_the_mturk_page_marks_confirmed_and_unconfirmed_work(client, researcher, survey):
    client.force_login(researcher)
    html = client.get(reverse("annotation:mturk_survey", args=[survey.pk])).content.decode()
    assert "1 confirmed by MTurk, <strong>1 unconfirmed</strong>" in html
    real, forged = html.index("AREALWORKER"), html.index("AFORGEDWORKER")
    assert html.index('class="confirmation confirmed"', real) < forged
    assert 'class="confirmation unconfirmed"' in html[forged:]
    # Only the confirmed worker can be blocked from the page (the form names the worker's row).
    real_row, forged_row = (Annotator.objects.get(worker_id=w).pk for w in ("AREALWORKER", "AFORGEDWORKER"))
    assert f'name="annotator" value="{real_row}"' in html
    assert f'name="annotator" value="{forged_row}"' not in html


def test_survey_and_annotator_pages_mark_unconfirmed_work(client, researcher, survey):
    client.force_login(researcher)
    detail = client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    forged_row = detail[detail.index("AFORGEDWORKER") :].split("</tr>")[0]
    real_row = detail[detail.index("AREALWORKER") :].split("</tr>")[0]
    assert "(1 unconfirmed)" in forged_row
    assert "unconfirmed" not in real_row
    for worker, mark in (
        ("AFORGEDWORKER", '· <em class="unconfirmed">unconfirmed</em>'),
        ("AREALWORKER", "· confirmed by MTurk"),
    ):
        annotator = Annotator.objects.get(worker_id=worker)
        page = client.get(reverse("annotation:survey_annotator", args=[survey.pk, annotator.pk])).content.decode()
        assert mark in page
        assert ("1 unconfirmed assignment</strong> (not yet confirmed by MTurk) counts in no analysis" in page) == (
            worker == "AFORGEDWORKER"
        )


def test_rating_exports_say_whether_mturk_confirmed_each_rating(survey):
    stream = io.StringIO()
    assert ratings_export(dataset=survey.dataset, survey=survey, stream=stream, real_ids=True) == 4
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {(r["worker"], r["confirmed"]) for r in records} == {("AREALWORKER", True), ("AFORGEDWORKER", False)}
    # Import reads the export back (the key is informational, like "survey").
    assert len(parse_ratings(stream.getvalue(), "jsonl")) == 4

    stream = io.StringIO()
    ratings_export(dataset=survey.dataset, survey=survey, stream=stream, fmt="csv", real_ids=True)
    rows = list(csv.DictReader(io.StringIO(stream.getvalue())))
    assert {(r["worker"], r["confirmed"]) for r in rows} == {("AREALWORKER", "True"), ("AFORGEDWORKER", "False")}
    assert len(parse_ratings(stream.getvalue(), "csv")) == 4


def test_the_quality_page_marks_whose_work_is_unconfirmed(client, researcher, survey):
    survey_quality(survey=survey)  # the page shows the computed report
    client.force_login(researcher)
    html = client.get(reverse("annotation:quality_survey", args=[survey.pk])).content.decode()
    mark = "(work not yet confirmed by the platform: counts in no analysis)"
    forged_row = html[html.index(">AFORGEDWORKER<") :].split("</tr>")[0]
    real_row = html[html.index(">AREALWORKER<") :].split("</tr>")[0]
    assert mark in forged_row and mark not in real_row
