"""MTurk payments and decisions retried after an outcome that was not seen.

MTurk is faked at one point, botocore's Stubber on a real boto3 client, with its documented answers:
SendBonus's UniqueRequestToken keeps a repeat from paying twice for 24 hours only, and its answer to
a repeat is "an error with a message containing the request ID" (wording not documented), so a
bonus tried before is checked against ListBonusPayments; ApproveAssignment and RejectAssignment
refuse an assignment that is no longer Submitted, so a refusal is checked against GetAssignment.
"""

import datetime as dt

import pytest
from botocore.stub import ANY
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.models import Assignment
from annotation.models.mturk import MTurkBonus
from annotation.services import mturk as services
from tests.annotation.mturk_helpers import CREATED, assignment_id, assignment_shape, hit_id
from tests.annotation.test_mturk_review import submitted  # noqa: F401 (fixture: a confirmed submission)

REASON = "Great agreement"


def send_bonus_params(token=ANY):
    return {
        "WorkerId": "AWORKERONE",
        "BonusAmount": "0.25",
        "AssignmentId": assignment_id(1),
        "Reason": REASON,
        "UniqueRequestToken": token,
    }


def expect_bonus_list(stubber, *paid):
    """ListBonusPayments for assignment 1: each of `paid` is (dollars, reason)."""
    stubber.add_response(
        "list_bonus_payments",
        {
            "NumResults": len(paid),
            "BonusPayments": [
                {
                    "WorkerId": "AWORKERONE",
                    "BonusAmount": amount,
                    "AssignmentId": assignment_id(1),
                    "Reason": reason,
                    "GrantTime": CREATED + dt.timedelta(hours=2),
                }
                for amount, reason in paid
            ],
        },
        {"AssignmentId": assignment_id(1), "MaxResults": 100},
    )


def duplicate_token_error(stubber):
    # MTurk's documented answer to a repeated token: an error naming the request id.
    stubber.add_client_error(
        "send_bonus",
        service_error_code="RequestError",
        service_message="The request with the UniqueRequestToken given was processed before (1732450000000).",
        http_status_code=400,
    )


def test_a_bonus_retried_after_its_answer_was_lost_is_found_on_mturk_and_not_sent_again(stubber, submitted):  # noqa: F811
    # The first SendBonus paid, but the connection broke before MTurk's answer came back; a day
    # later the token no longer protects a repeat, so MTurk's own list decides.
    _survey, slot = submitted
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(ProviderError):
        services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON)
    expect_bonus_list(stubber, ("0.25", REASON))
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON) is False
    assert MTurkBonus.objects.get().sent_at is not None
    # Asked again: recorded as paid, MTurk is asked nothing (the stubber has no answer left).
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON) is False


def test_a_bonus_not_listed_after_a_lost_answer_is_sent_again_with_the_same_token(stubber, submitted):  # noqa: F811
    _survey, slot = submitted
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(ProviderError):
        services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON)
    token = MTurkBonus.objects.get().request_token
    expect_bonus_list(stubber, ("0.25", "Another reason"), ("0.50", REASON))
    stubber.add_response("send_bonus", {}, send_bonus_params(token))
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON) is True
    assert MTurkBonus.objects.get().sent_at is not None


def test_a_repeat_refused_in_words_without_already_is_recognised_by_mturks_list(stubber, submitted):  # noqa: F811
    # A first request paid and its process died before recording it; the repeat's refusal names
    # the request id but not the word "already": MTurk's list shows the bonus, so it is paid.
    _survey, slot = submitted
    stubber.add_response("send_bonus", {}, send_bonus_params())  # the first request, answered
    services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON)
    MTurkBonus.objects.update(sent_at=None)  # ...but its process died before recording it
    expect_bonus_list(stubber)  # a listing that lags behind MTurk's payment (read before it landed)
    duplicate_token_error(stubber)
    expect_bonus_list(stubber, ("0.25", REASON))
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON) is False
    assert MTurkBonus.objects.get().sent_at is not None


def test_a_refused_bonus_mturk_does_not_list_is_still_refused(stubber, submitted):  # noqa: F811
    _survey, slot = submitted
    stubber.add_client_error(
        "send_bonus",
        service_error_code="RequestError",
        service_message="This Requester has insufficient funds in their account to complete this transaction.",
        http_status_code=400,
    )
    expect_bonus_list(stubber)
    with pytest.raises(ProviderError, match="insufficient funds"):
        services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON)
    assert MTurkBonus.objects.get().sent_at is None


def test_the_page_says_a_repeated_bonus_was_already_paid_and_sent_nothing(client, researcher, stubber, submitted):  # noqa: F811
    survey, slot = submitted
    stubber.add_response("send_bonus", {}, send_bonus_params())
    services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON)
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:mturk_action", args=[survey.pk]),
        {"action": "bonus", "assignment_id": assignment_id(1), "amount_dollars": "0.25", "reason": REASON},
        follow=True,
    )
    text = response.content.decode()
    assert "already paid" in text and "nothing was sent" in text
    assert "Bonus: " not in text


def expect_assignment_status(stubber, status):
    stubber.add_response(
        "get_assignment",
        {"Assignment": assignment_shape(1, hit=hit_id(0), worker="AWORKERONE", status=status), "HIT": {}},
        {"AssignmentId": assignment_id(1)},
    )


def already_decided(stubber, operation):
    stubber.add_client_error(
        operation,
        service_error_code="RequestError",
        service_message="This operation can be called with a status of: Submitted (1732450000000)",
        http_status_code=400,
    )


def test_an_approval_mturk_made_whose_answer_was_lost_is_recorded_by_the_next_click(stubber, submitted):  # noqa: F811
    _survey, slot = submitted
    stubber.add_client_error("approve_assignment", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(ProviderError):
        services.mturk_approve(assignment=slot)
    already_decided(stubber, "approve_assignment")
    expect_assignment_status(stubber, "Approved")
    assert services.mturk_approve(assignment=slot) is True
    slot.refresh_from_db()
    assert (slot.status, slot.external_status) == (Assignment.Status.APPROVED, "Approved")


def test_a_rejection_mturk_made_whose_answer_was_lost_is_recorded_by_the_next_click(stubber, submitted):  # noqa: F811
    _survey, slot = submitted
    already_decided(stubber, "reject_assignment")
    expect_assignment_status(stubber, "Rejected")
    assert services.mturk_reject(assignment=slot, reason="Failed the checks") is True
    slot.refresh_from_db()
    assert slot.status == Assignment.Status.REJECTED


def test_approving_work_mturk_rejected_is_still_refused(stubber, submitted):  # noqa: F811
    _survey, slot = submitted
    already_decided(stubber, "approve_assignment")
    expect_assignment_status(stubber, "Rejected")
    with pytest.raises(ProviderError, match="status of: Submitted"):
        services.mturk_approve(assignment=slot)
    slot.refresh_from_db()
    assert slot.status == Assignment.Status.SUBMITTED
