"""Approve, reject, bonus, block, expire, extend and notify, through services and commands."""

import datetime as dt
from io import StringIO

import pytest
from botocore.stub import ANY
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk.provider import MTurkProvider
from annotation.crowd.mturk.review import EXPIRE_AT_ONCE
from annotation.models import Annotator, Assignment, Rating
from annotation.models.mturk import MTurkAssignment, MTurkBlock, MTurkBonus, MTurkExclusionQualification, MTurkHIT
from annotation.quality.selectors import accepted_ratings
from annotation.services import mturk as services
from annotation.services.assignments import assignment_submit
from tests.annotation.mturk_helpers import (
    HIT_TYPE_ID,
    QUALIFICATION_ID,
    assignment_id,
    assignment_shape,
    expect_create_hit,
    expect_prelude,
    expect_unknown_assignment,
    hit_id,
    make_survey,
    publish_all,
)

REVIEWABLE = {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100}


@pytest.fixture
def submitted(stubber, researcher):
    """A published survey where worker AWORKERONE submitted assignment 1, confirmed by a sync."""
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    hit = survey.hits.get(position=0)
    slot = services.mturk_assignment_open(hit=hit, assignment_id=assignment_id(1), worker_id="AWORKERONE")
    answers = {item.pk: {"scores": {"overall": 2 if item.kind == "instructed" else 3}} for item in hit.items.all()}
    assignment_submit(assignment=slot, answers=answers)
    stubber.add_response("list_reviewable_hits", {"NumResults": 0, "HITs": []}, REVIEWABLE)
    stubber.add_response(
        "list_assignments_for_hit",
        {"NumResults": 1, "Assignments": [assignment_shape(1, hit=hit_id(0), worker="AWORKERONE")]},
        {"HITId": hit_id(0), "AssignmentStatuses": ANY, "MaxResults": 100},
    )
    stubber.add_response(
        "list_assignments_for_hit", {"NumResults": 0, "Assignments": []}, {"HITId": hit_id(1), **_any_page()}
    )
    MTurkProvider(sandbox=True).sync(survey=survey)
    slot.refresh_from_db()
    return survey, slot


def _any_page():
    return {"AssignmentStatuses": ANY, "MaxResults": 100}


def test_approve_sends_the_assignment_id_and_records_the_decision(stubber, submitted):
    _survey, slot = submitted
    stubber.add_response(
        "approve_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": "Thanks, careful work."}
    )
    assert services.mturk_approve(assignment=slot, feedback="Thanks, careful work.") is True
    slot.refresh_from_db()
    assert (slot.status, slot.external_status) == (Assignment.Status.APPROVED, "Approved")
    assert MTurkAssignment.objects.get(mturk_id=assignment_id(1)).status == "Approved"
    # Approving again asks MTurk nothing (the stubber has no response left).
    assert services.mturk_approve(assignment=slot) is False


def test_reject_needs_a_reason_and_sends_it_as_feedback(stubber, submitted):
    survey, slot = submitted
    with pytest.raises(ProviderError, match="reason"):
        services.mturk_reject(assignment=slot, reason="  ")
    reason = "Failed the attention checks (choose 2)."
    stubber.add_response("reject_assignment", {}, {"AssignmentId": assignment_id(1), "RequesterFeedback": reason})
    assert services.mturk_reject(assignment=slot, reason=reason) is True
    slot.refresh_from_db()
    assert (slot.status, slot.external_status) == (Assignment.Status.REJECTED, "Rejected")
    assert accepted_ratings(dataset=survey.dataset).count() == 0
    assert accepted_ratings(dataset=survey.dataset, apply_exclusions=False).count() == 2


def test_bonus_pays_the_confirmed_worker_once_with_a_unique_request_token(stubber, submitted):
    _survey, slot = submitted
    stubber.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AWORKERONE",
            "BonusAmount": "0.25",
            "AssignmentId": assignment_id(1),
            "Reason": "Great agreement",
            "UniqueRequestToken": ANY,
        },
    )
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason="Great agreement") is True
    bonus = MTurkBonus.objects.get()
    assert bonus.sent_at is not None
    assert len(bonus.request_token) <= 64
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason="Great agreement") is False
    assert MTurkBonus.objects.count() == 1


def test_bonus_lost_answer_is_not_paid_twice(stubber, submitted):
    _survey, slot = submitted
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(ProviderError):
        services.mturk_bonus(assignment=slot, amount_cents=25, reason="Great agreement")
    token = MTurkBonus.objects.get().request_token
    # Tried before: MTurk's list of the assignment's bonuses is read first, and shows none.
    stubber.add_response(
        "list_bonus_payments",
        {"NumResults": 0, "BonusPayments": []},
        {"AssignmentId": assignment_id(1), "MaxResults": 100},
    )
    stubber.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AWORKERONE",
            "BonusAmount": "0.25",
            "AssignmentId": assignment_id(1),
            "Reason": "Great agreement",
            "UniqueRequestToken": token,
        },
    )
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason="Great agreement") is True
    assert MTurkBonus.objects.get().sent_at is not None


def test_bonus_is_refused_for_an_assignment_mturk_has_not_confirmed(stubber, submitted):
    survey, _ = submitted
    hit = survey.hits.get(position=1)
    forged = services.mturk_assignment_open(hit=hit, assignment_id="3FORGED", worker_id="AFORGER")
    expect_unknown_assignment(stubber, "3FORGED")
    with pytest.raises(ProviderError, match="does not confirm"):
        services.mturk_bonus(assignment=forged, amount_cents=100, reason="x")
    assert not MTurkBonus.objects.exists()


def test_block_gives_the_exclusion_qualification_once(stubber, submitted):
    survey, _ = submitted
    stubber.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": QUALIFICATION_ID,
            "WorkerId": "AWORKERONE",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    assert services.mturk_block(survey=survey, worker_id="AWORKERONE", reason="Low agreement") is True
    assert MTurkBlock.objects.get().reason == "Low agreement"
    assert services.mturk_block(survey=survey, worker_id="AWORKERONE", reason="Low agreement") is False


def test_expire_sets_expiration_in_the_past_and_skips_expired_hits(stubber, submitted):
    survey, _ = submitted
    for n in range(2):
        stubber.add_response("update_expiration_for_hit", {}, {"HITId": hit_id(n), "ExpireAt": EXPIRE_AT_ONCE})
    assert services.mturk_expire(survey=survey) == {"expired": 2}
    assert services.mturk_expire(survey=survey) == {"expired": 0}


def test_extend_moves_expiration_forward(stubber, submitted):
    survey, _ = submitted
    for n in range(2):
        stubber.add_response("update_expiration_for_hit", {}, {"HITId": hit_id(n), "ExpireAt": ANY})
    result = services.mturk_extend(survey=survey, hours=48)
    assert result["extended"] == 2
    expires = set(MTurkHIT.objects.values_list("expires_at", flat=True))
    assert len(expires) == 1
    assert expires.pop() == result["expires_at"]
    assert dt.timedelta(hours=47) < result["expires_at"] - timezone.now() <= dt.timedelta(hours=48)


def test_notify_messages_confirmed_workers(stubber, submitted):
    survey, _ = submitted
    stubber.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": []},
        {"Subject": "New HITs", "MessageText": "More HITs are up.", "WorkerIds": ["AWORKERONE"]},
    )
    assert services.mturk_notify(survey=survey, subject="New HITs", message="More HITs are up.") == []


def test_review_commands_approve_reject_bonus_block_expire(stubber, submitted):
    survey, slot = submitted
    out = StringIO()
    stubber.add_response("approve_assignment", {}, {"AssignmentId": assignment_id(1)})
    call_command("mturk_review", survey.name, "--approve", assignment_id(1), stdout=out)
    assert f"approved {assignment_id(1)}" in out.getvalue()

    with pytest.raises(CommandError, match="--reason"):
        call_command("mturk_review", survey.name, "--reject", assignment_id(1))

    stubber.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AWORKERONE",
            "BonusAmount": "0.10",
            "AssignmentId": assignment_id(1),
            "Reason": "thanks",
            "UniqueRequestToken": ANY,
        },
    )
    call_command("mturk_bonus", survey.name, assignment_id(1), "--amount", "0.10", "--reason", "thanks", stdout=out)
    assert MTurkBonus.objects.get().amount_cents == 10

    stubber.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": QUALIFICATION_ID,
            "WorkerId": "AWORKERONE",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    call_command("mturk_block", survey.name, "AWORKERONE", "--reason", "failed checks", stdout=out)
    assert MTurkBlock.objects.filter(annotator=Annotator.objects.get(worker_id="AWORKERONE")).exists()

    for n in range(2):
        stubber.add_response("update_expiration_for_hit", {}, {"HITId": hit_id(n), "ExpireAt": EXPIRE_AT_ONCE})
    call_command("mturk_expire", survey.name, stdout=out)
    assert "expired 2 HITs" in out.getvalue()
    assert Rating.objects.filter(assignment=slot).count() == 2


def test_publish_and_sync_commands(stubber, researcher):
    survey = make_survey(researcher, n_hits=1, name="cli-study")
    out = StringIO()
    stubber.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    expect_prelude(stubber, survey)
    expect_create_hit(stubber, survey, survey.hits.get(), 0)
    call_command("mturk_publish", "cli-study", stdout=out)
    text = out.getvalue()
    assert "sandbox: 1 HITs x 3 assignments, rewards $1.50 + fees $0.30 (20%) = $1.80; balance $10000.00" in text
    assert "created 1 HITs" in text

    stubber.add_response("list_reviewable_hits", {"NumResults": 0, "HITs": []}, REVIEWABLE)
    stubber.add_response(
        "list_assignments_for_hit", {"NumResults": 0, "Assignments": []}, {"HITId": hit_id(0), **_any_page()}
    )
    call_command("mturk_sync", "cli-study", stdout=out)
    assert "seen=0" in out.getvalue()


def test_publish_command_live_switch_is_refused_after_sandbox_hits_exist(stubber, submitted):
    survey, _ = submitted
    with pytest.raises(CommandError, match="other endpoint"):
        call_command("mturk_publish", survey.name, "--live")
    assert MTurkExclusionQualification.objects.get().sandbox is True


def test_notify_sends_workers_in_batches_of_one_hundred(stubber, db):
    workers = [f"AW{n:05d}" for n in range(150)]
    stubber.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": []},
        {"Subject": "Hi", "MessageText": "New HITs", "WorkerIds": workers[:100]},
    )
    failure = {"NotifyWorkersFailureCode": "SoftFailure", "NotifyWorkersFailureMessage": "x", "WorkerId": "AW00149"}
    stubber.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": [failure]},
        {"Subject": "Hi", "MessageText": "New HITs", "WorkerIds": workers[100:]},
    )
    assert MTurkProvider(sandbox=True).notify(worker_ids=workers, subject="Hi", message="New HITs") == [failure]


def test_attention_policy_rejects_failed_checks_and_approves_the_rest_once(stubber, researcher):
    survey = make_survey(researcher, n_hits=1, name="policy-study")
    survey.attention_policy = "reject"
    survey.save()
    publish_all(stubber, survey)
    hit = survey.hits.get()
    for n, (worker, check) in enumerate([("AGOOD", 2), ("ACARELESS", 5)], start=1):
        slot = services.mturk_assignment_open(hit=hit, assignment_id=assignment_id(n), worker_id=worker)
        answers = {
            item.pk: {"scores": {"overall": check if item.kind == "instructed" else 3}} for item in hit.items.all()
        }
        assignment_submit(assignment=slot, answers=answers)
    assert Assignment.objects.get(external_id=assignment_id(2)).flagged is True
    stubber.add_response("list_reviewable_hits", {"NumResults": 0, "HITs": []}, REVIEWABLE)
    stubber.add_response(
        "list_assignments_for_hit",
        {
            "NumResults": 2,
            "Assignments": [
                assignment_shape(1, hit=hit_id(0), worker="AGOOD"),
                assignment_shape(2, hit=hit_id(0), worker="ACARELESS"),
            ],
        },
        {"HITId": hit_id(0), **_any_page()},
    )
    MTurkProvider(sandbox=True).sync(survey=survey)

    stubber.add_response("approve_assignment", {}, {"AssignmentId": assignment_id(1)})
    stubber.add_response(
        "reject_assignment",
        {},
        {"AssignmentId": assignment_id(2), "RequesterFeedback": services.ATTENTION_REJECT_REASON},
    )
    out = StringIO()
    call_command("mturk_review", survey.name, "--apply-policy", "--approve-rest", stdout=out)
    assert "policy reject: rejected 1, approved 1" in out.getvalue()
    statuses = dict(Assignment.objects.filter(hit=hit).exclude(external_id="").values_list("external_id", "status"))
    assert statuses == {assignment_id(1): "approved", assignment_id(2): "rejected"}
    # Again: nothing left to decide, nothing sent.
    assert services.mturk_apply_attention_policy(survey=survey, approve_rest=True) == {"rejected": 0, "approved": 0}
