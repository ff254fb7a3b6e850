"""Prolific's webhook: signed, fresh, applied once; a returned submission frees its slot."""

import time

import httpx
import pytest

from annotation.models import Assignment, ProlificStudy, ProlificSubmission, ProlificWebhookEvent
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    deliver,
    entry,
    pid,
    session,
    submissions_answer,
)


def returned(event_id="evt-1", participant=None):
    return {
        "event_id": event_id,
        "event_type": "submission.status.change",
        "resource_id": session(1),
        "status": "RETURNED",
        "participant_id": participant or pid(1),
        "study_id": STUDY_ID,
    }


def test_a_signed_returned_submission_frees_the_slot_and_confirms_the_session(client, started):
    assert deliver(client, returned()).status_code == 200
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()
    row = ProlificSubmission.objects.get()
    assert row.status == "RETURNED" and row.confirmed


def test_a_bad_signature_changes_nothing(client, started):
    assert deliver(client, returned(), secret="not-the-secret").status_code == 403
    assert deliver(client, returned(), signature="AAAA").status_code == 403
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1
    assert not ProlificWebhookEvent.objects.exists()


def test_a_stale_timestamp_is_refused_even_with_a_good_signature(client, started):
    assert deliver(client, returned(), timestamp=int(time.time()) - 3600).status_code == 403
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_a_repeated_event_is_applied_once(client, started):
    assert deliver(client, returned()).status_code == 200
    # The participant starts again; a late repeat of the old event must not take the new slot away.
    ProlificSubmission.objects.update(status="ACTIVE")
    entry(client, started, participant=pid(1), session_id=session(1))
    assert deliver(client, returned()).status_code == 200
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1
    assert ProlificWebhookEvent.objects.count() == 1


def test_a_study_status_change_is_recorded(client, started):
    body = {"event_id": "evt-9", "event_type": "study.status.change", "resource_id": STUDY_ID, "status": "PAUSED"}
    assert deliver(client, body).status_code == 200
    assert ProlificStudy.objects.get().status == "PAUSED"


def test_without_a_configured_secret_every_delivery_is_refused(client, started, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    assert deliver(client, returned()).status_code == 403


def test_the_documented_payload_without_a_study_confirms_only_through_the_studys_own_list(
    client, started, api, django_capture_on_commit_callbacks
):
    """Prolific's submission.status.change carries resource_id, participant_id and status, no study id:
    the webhook records the status and asks the study's submission list whether the session is ours."""
    listing = api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW")))
    )
    documented = {
        "event_type": "submission.status.change",
        "resource_id": session(1),
        "participant_id": pid(1),
        "status": "AWAITING REVIEW",
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, documented).status_code == 200
    assert listing.called
    row = ProlificSubmission.objects.get()
    assert row.confirmed and row.status == "AWAITING REVIEW"


def test_a_session_the_studys_list_does_not_hold_stays_unconfirmed_after_the_webhook(
    client, started, api, django_capture_on_commit_callbacks
):
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=submissions_answer()))
    documented = {"event_type": "submission.status.change", "resource_id": session(1), "participant_id": pid(1)}
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(client, {**documented, "status": "AWAITING REVIEW"}).status_code == 200
    assert ProlificSubmission.objects.get().confirmed is False


@pytest.mark.parametrize("body", [[], "text", 7, None, {"event_type": "submission.status.change", "resource_id": []}])
def test_a_signed_body_that_is_no_event_is_refused_with_a_message_and_changes_nothing(client, started, body):
    answer = deliver(client, body)
    assert answer.status_code == 400 and b"event" in answer.content
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1
    assert not ProlificWebhookEvent.objects.exists()
