"""Sync: paging through MTurk's lists, confirming assignments, and running twice changing nothing."""

import pytest
from django.forms.models import model_to_dict
from django.urls import reverse

from annotation.crowd.mturk.provider import MTurkProvider
from annotation.crowd.mturk.tasks import sync_live_surveys, sync_survey
from annotation.models import Assignment, Rating
from annotation.models.mturk import MTurkAssignment, MTurkHIT
from annotation.quality.selectors import accepted_ratings
from config.celery import app
from tests.annotation.mturk_helpers import (
    HIT_TYPE_ID,
    assignment_id,
    assignment_shape,
    hit_shape,
    make_survey,
    publish_all,
)


def complete(client, survey, *, hit_id, assignment, worker, score):
    """A worker (or a forger) works through the task page."""
    url = reverse("annotation:mturk_task", args=[survey.token])
    client.get(url, {"assignmentId": assignment, "hitId": hit_id, "workerId": worker, "turkSubmitTo": ""})
    slot = Assignment.objects.get(external_id=assignment)
    data = {"assignmentId": assignment, "hitId": hit_id, "workerId": worker, "assignment_token": slot.token}
    for item in slot.hit.items.all():
        data[f"score-{item.pk}-overall"] = "2" if item.kind == "instructed" else str(score)
    assert "externalSubmit" in client.post(url, data).content.decode()


@pytest.fixture
def worked_survey(stubber, client, researcher):
    survey = make_survey(researcher, n_hits=2)
    hit_ids = publish_all(stubber, survey)
    complete(client, survey, hit_id=hit_ids[0], assignment=assignment_id(1), worker="AWORKERONE", score=4)
    complete(client, survey, hit_id=hit_ids[0], assignment=assignment_id(2), worker="AWORKERTWO", score=5)
    # Someone types a worker id into the URL; MTurk knows assignment 3 as another worker's.
    complete(client, survey, hit_id=hit_ids[1], assignment=assignment_id(3), worker="AFORGEDID", score=1)
    return survey, hit_ids


def expect_sync(stubber, hit_ids):
    stubber.add_response(
        "list_reviewable_hits",
        {"NextToken": "reviewable-page-2", "NumResults": 1, "HITs": [hit_shape(0, status="Reviewable")]},
        {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100},
    )
    stubber.add_response(
        "list_reviewable_hits",
        {"NumResults": 0, "HITs": []},
        {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100, "NextToken": "reviewable-page-2"},
    )
    statuses = ["Submitted", "Approved", "Rejected"]
    stubber.add_response(
        "list_assignments_for_hit",
        {
            "NextToken": "assignments-page-2",
            "NumResults": 1,
            "Assignments": [assignment_shape(1, hit=hit_ids[0], worker="AWORKERONE")],
        },
        {"HITId": hit_ids[0], "AssignmentStatuses": statuses, "MaxResults": 100},
    )
    stubber.add_response(
        "list_assignments_for_hit",
        {"NumResults": 1, "Assignments": [assignment_shape(2, hit=hit_ids[0], worker="AWORKERTWO", status="Approved")]},
        {"HITId": hit_ids[0], "AssignmentStatuses": statuses, "MaxResults": 100, "NextToken": "assignments-page-2"},
    )
    stubber.add_response(
        "list_assignments_for_hit",
        {
            "NumResults": 2,
            "Assignments": [
                assignment_shape(3, hit=hit_ids[1], worker="AREALWORKER"),
                assignment_shape(4, hit=hit_ids[1], worker="ANEVERSEEN"),
            ],
        },
        {"HITId": hit_ids[1], "AssignmentStatuses": statuses, "MaxResults": 100},
    )


def snapshot():
    return (
        [model_to_dict(row, exclude=["id"]) for row in MTurkAssignment.objects.order_by("mturk_id")],
        [model_to_dict(row) for row in Assignment.objects.order_by("pk")],
        list(MTurkHIT.objects.order_by("pk").values_list("mturk_id", "status")),
        Rating.objects.count(),
    )


def test_sync_pages_through_mturk_and_records_every_assignment(stubber, worked_survey):
    survey, hit_ids = worked_survey
    expect_sync(stubber, hit_ids)
    summary = MTurkProvider(sandbox=True).sync(survey=survey)

    assert summary == {"hits": 2, "reviewable": 1, "seen": 4, "created": 4, "updated": 0, "confirmed": 2, "released": 0}
    records = {r.mturk_id: r for r in MTurkAssignment.objects.all()}
    assert records[assignment_id(1)].confirmed and records[assignment_id(1)].status == "Submitted"
    assert records[assignment_id(2)].confirmed and records[assignment_id(2)].status == "Approved"
    assert MTurkHIT.objects.get(mturk_id=hit_ids[0]).status == "Reviewable"
    assert Assignment.objects.get(external_id=assignment_id(2)).status == Assignment.Status.APPROVED
    assert Assignment.objects.get(external_id=assignment_id(1)).external_status == "Submitted"
    # MTurk's assignment the app never saw is kept, unmatched.
    assert records[assignment_id(4)].assignment is None and not records[assignment_id(4)].confirmed


def test_a_worker_id_typed_into_the_url_is_not_confirmed(stubber, worked_survey):
    survey, hit_ids = worked_survey
    expect_sync(stubber, hit_ids)
    MTurkProvider(sandbox=True).sync(survey=survey)

    forged = MTurkAssignment.objects.get(mturk_id=assignment_id(3))
    assert forged.worker_id == "AREALWORKER"
    assert forged.assignment.annotator.worker_id == "AFORGEDID"
    assert forged.confirmed is False
    assert Assignment.objects.get(external_id=assignment_id(3)).external_status == ""


def test_only_confirmed_mturk_ratings_count(stubber, worked_survey):
    survey, hit_ids = worked_survey
    assert Rating.objects.filter(survey=survey).count() == 6
    assert accepted_ratings(dataset=survey.dataset).count() == 0  # nothing confirmed before sync

    expect_sync(stubber, hit_ids)
    MTurkProvider(sandbox=True).sync(survey=survey)
    counted = accepted_ratings(dataset=survey.dataset)
    assert sorted(counted.values_list("annotator__worker_id", flat=True)) == ["AWORKERONE"] * 2 + ["AWORKERTWO"] * 2
    assert "AFORGEDID" not in set(counted.values_list("annotator__worker_id", flat=True))


def test_sync_twice_changes_nothing(stubber, worked_survey):
    survey, hit_ids = worked_survey
    expect_sync(stubber, hit_ids)
    sync_survey.apply(args=(survey.pk,)).get()
    before = snapshot()

    expect_sync(stubber, hit_ids)
    summary = sync_survey.apply(args=(survey.pk,)).get()
    assert summary["created"] == 0
    assert summary["updated"] == 0
    assert summary["seen"] == 4
    assert snapshot() == before


def test_sync_is_retried_when_mturk_throttles(stubber, worked_survey):
    survey, hit_ids = worked_survey
    stubber.add_client_error("list_reviewable_hits", service_error_code="ThrottlingException", http_status_code=400)
    expect_sync(stubber, hit_ids)
    result = sync_survey.apply(args=(survey.pk,), throw=False)
    assert result.successful()
    assert result.get()["confirmed"] == 2


def test_beat_syncs_live_mturk_surveys_with_published_hits(stubber, researcher):
    assert app.conf.beat_schedule["mturk-sync-live-surveys"]["task"] == sync_live_surveys.name
    published = make_survey(researcher, n_hits=1, name="published")
    hit_ids = publish_all(stubber, published)
    make_survey(researcher, n_hits=1, name="never-published")
    stubber.add_response(
        "list_reviewable_hits",
        {"NumResults": 0, "HITs": []},
        {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100},
    )
    stubber.add_response(
        "list_assignments_for_hit",
        {"NumResults": 0, "Assignments": []},
        {"HITId": hit_ids[0], "AssignmentStatuses": ["Submitted", "Approved", "Rejected"], "MaxResults": 100},
    )
    assert sync_live_surveys.apply().get() == 1
