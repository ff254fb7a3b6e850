"""MTurk payments and decisions retried after an outcome that was not seen.

MTurk is faked at one point, botocore's Stubber on a real boto3 client, with its documented answers:
SendBonus's UniqueRequestToken keeps a repeat from paying twice for 24 hours only, and its answer to
a repeat is "an error with a message containing the request ID" (wording not documented), so a
bonus tried before is checked against ListBonusPayments; ApproveAssignment and RejectAssignment
refuse an assignment that is no longer Submitted, so a refusal is checked against GetAssignment.
"""

import datetime as dt
import io
import re

import pytest
from botocore.stub import ANY
from django.core.management import call_command
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


def page_bonus_form(client, survey):
    """The bonus form's fields as a freshly loaded MTurk page renders them (its page key included)."""
    text = client.get(reverse("annotation:mturk_survey", args=[survey.pk])).content.decode()
    key = re.search(r'name="bonus_key" value="([^"]+)"', text).group(1)
    return {
        "action": "bonus",
        "assignment_id": assignment_id(1),
        "amount_dollars": "0.25",
        "reason": REASON,
        "bonus_key": key,
    }


def post_bonus(client, survey, form):
    response = client.post(reverse("annotation:mturk_action", args=[survey.pk]), form, follow=True)
    return response.content.decode()


def test_the_page_says_a_bonus_form_sent_again_was_already_paid_and_sent_nothing(
    client,
    researcher,
    stubber,
    submitted,  # noqa: F811
):
    survey, _slot = submitted
    client.force_login(researcher)
    form = page_bonus_form(client, survey)
    stubber.add_response("send_bonus", {}, send_bonus_params())
    assert "Bonus: " in post_bonus(client, survey, form)
    text = post_bonus(client, survey, form)  # a double click, or the browser sending it again
    assert "already paid" in text and "nothing more was sent" in text
    assert "Bonus: " not in text
    assert MTurkBonus.objects.count() == 1


def test_a_second_bonus_of_the_same_amount_and_reason_from_a_fresh_page_is_paid(client, researcher, stubber, submitted):  # noqa: F811
    # A researcher who deliberately pays the same worker the same bonus again (a second round of
    # good work) is paid, not silently refused: the fresh page names a new bonus.
    survey, _slot = submitted
    client.force_login(researcher)
    first, second = page_bonus_form(client, survey), page_bonus_form(client, survey)
    stubber.add_response("send_bonus", {}, send_bonus_params())
    stubber.add_response("send_bonus", {}, send_bonus_params())
    assert "Bonus: " in post_bonus(client, survey, first)
    assert "Bonus: " in post_bonus(client, survey, second)
    assert MTurkBonus.objects.filter(sent_at__isnull=False).count() == 2
    tokens = set(MTurkBonus.objects.values_list("request_token", flat=True))
    assert len(tokens) == 2


def test_a_bonus_form_retried_with_an_edited_reason_after_a_lost_answer_pays_once(
    client,
    researcher,
    stubber,
    submitted,  # noqa: F811
):
    # MTurk paid the first request but its answer was lost; the researcher edits the reason and
    # sends the same form again. The form names the bonus, so MTurk's list is read, not paid again.
    survey, _slot = submitted
    client.force_login(researcher)
    form = page_bonus_form(client, survey)
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    post_bonus(client, survey, form)
    expect_bonus_list(stubber, ("0.25", REASON))
    text = post_bonus(client, survey, {**form, "reason": REASON + " (thank you!)"})
    assert "already paid" in text and "nothing more was sent" in text
    bonus = MTurkBonus.objects.get()
    assert bonus.sent_at is not None and bonus.reason == REASON


def test_a_bonus_form_retried_with_an_edited_reason_sends_the_first_reason_with_the_same_token(
    client,
    researcher,
    stubber,
    submitted,  # noqa: F811
):
    survey, _slot = submitted
    client.force_login(researcher)
    form = page_bonus_form(client, survey)
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    post_bonus(client, survey, form)
    token = MTurkBonus.objects.get().request_token
    expect_bonus_list(stubber)  # MTurk never got the first request
    stubber.add_response("send_bonus", {}, send_bonus_params(token))
    assert "Bonus: " in post_bonus(client, survey, {**form, "reason": "Edited reason"})
    assert MTurkBonus.objects.get().sent_at is not None


def test_a_bonus_form_without_its_page_key_is_refused_in_words_and_sends_nothing(
    client,
    researcher,
    stubber,
    submitted,  # noqa: F811
):
    survey, _slot = submitted
    client.force_login(researcher)
    form = {k: v for k, v in page_bonus_form(client, survey).items() if k != "bonus_key"}
    text = post_bonus(client, survey, form)
    assert "This bonus form has no page key: reload the page" in text
    assert not MTurkBonus.objects.exists()


def test_a_lost_bonus_is_told_apart_from_an_earlier_deliberate_one_of_the_same_amount_and_reason(stubber, submitted):  # noqa: F811
    # One bonus of $0.25 was paid and recorded; a second, deliberate one's answer is lost and MTurk
    # lists only the first: the second was not paid, so it is sent again with its own token.
    _survey, slot = submitted
    stubber.add_response("send_bonus", {}, send_bonus_params())
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON, key="first-page-key") is True
    stubber.add_client_error("send_bonus", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(ProviderError):
        services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON, key="second-page-key")
    second = MTurkBonus.objects.get(sent_at__isnull=True)
    expect_bonus_list(stubber, ("0.25", REASON))
    stubber.add_response("send_bonus", {}, send_bonus_params(second.request_token))
    assert services.mturk_bonus(assignment=slot, amount_cents=25, reason=REASON, key="second-page-key") is True
    assert MTurkBonus.objects.filter(sent_at__isnull=False).count() == 2


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


def test_the_bonus_command_run_again_with_its_key_and_an_edited_reason_pays_once(stubber, submitted):  # noqa: F811
    survey, _slot = submitted
    stubber.add_response("send_bonus", {}, send_bonus_params())
    command = ["mturk_bonus", survey.name, assignment_id(1), "--amount", "0.25", "--key", "ticket-41"]
    out = io.StringIO()
    call_command(*command, "--reason", REASON, stdout=out)
    call_command(*command, "--reason", "Edited: great agreement", stdout=out)
    assert out.getvalue().splitlines() == [
        f"bonus 25c for {assignment_id(1)}",
        f"bonus 25c for {assignment_id(1)} (already paid)",
    ]
    assert MTurkBonus.objects.get().reason == REASON
