"""Signed but malformed webhook deliveries are refused with 400 ("not an event") and store nothing,
and a body larger than any event is refused from its Content-Length before any of it is read
(security review 2026-11-29, points 4 and the informational note on the webhook body)."""

import base64
import hashlib
import hmac
import json
import time

import pytest
from django.test import RequestFactory

from annotation.models import ProlificStudy, ProlificWebhookEvent
from annotation.views.crowd.prolific_entry import WEBHOOK_MAX_BYTES, prolific_webhook
from tests.access.db_fingerprint import fingerprint
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    WEBHOOK_SECRET,
    WEBHOOK_URL,
)
from tests.annotation.prolific_helpers import deliver as deliver_json


def signature_for(raw, timestamp, secret=WEBHOOK_SECRET):
    return base64.b64encode(hmac.new(secret.encode(), str(timestamp).encode() + raw, hashlib.sha256).digest()).decode()


def deliver(client, raw):
    """POST `raw` bytes with Prolific's good signature over them."""
    timestamp = int(time.time())
    return client.post(
        WEBHOOK_URL,
        raw,
        content_type="application/json",
        headers={
            "X-Prolific-Request-Signature": signature_for(raw, timestamp),
            "X-Prolific-Request-Timestamp": str(timestamp),
        },
    )


MALFORMED = {
    # the review's body was 100,000 deep (200 KB, now over the size cap: 413); 30,000 fit under it
    "nested_30000_deep": b"[" * 30_000 + b"]" * 30_000,
    "nested_deep_inside_an_event": json.dumps({"event_type": "x", "extra": [[[[[]]]]]})
    .replace("[[[[[]]]]]", "[" * 500 + "]" * 500)
    .encode(),
    "nul_in_event_id": json.dumps({"event_id": "a\u0000b", "event_type": "x"}).encode(),
    "lone_surrogate_in_status": b'{"event_type": "study.status.change", "resource_id": "%s", "status": "\\ud800"}'
    % STUDY_ID.encode(),
    "status_of_500_characters": json.dumps(
        {"event_type": "study.status.change", "resource_id": STUDY_ID, "status": "X" * 500}
    ).encode(),
    "event_id_of_101_characters": json.dumps({"event_id": "e" * 101, "event_type": "x"}).encode(),
    "resource_id_of_65_characters": json.dumps(
        {"event_type": "submission.status.change", "resource_id": "r" * 65, "status": "RETURNED"}
    ).encode(),
}


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_signed_malformed_delivery_is_refused_as_no_event_and_stores_nothing(client, started, raw):
    before = fingerprint()
    answer = deliver(client, raw)
    assert answer.status_code == 400, answer.content[:200]
    assert b"not JSON" in answer.content or b"not an event" in answer.content
    assert fingerprint() == before
    assert not ProlificWebhookEvent.objects.exists()


def test_fields_as_long_as_their_columns_are_still_applied(client, started):
    body = {"event_id": "e" * 100, "event_type": "study.status.change", "resource_id": STUDY_ID, "status": "X" * 30}
    assert deliver_json(client, body).status_code == 200
    assert ProlificStudy.objects.get().status == "X" * 30
    assert ProlificWebhookEvent.objects.get().event_id == "e" * 100


def test_a_body_over_the_cap_is_refused_with_413_before_the_signature_and_unread(started):
    raw = b'{"event_type": "x", "pad": "' + b"x" * WEBHOOK_MAX_BYTES + b'"}'
    request = RequestFactory().post(WEBHOOK_URL, raw, content_type="application/json")
    answer = prolific_webhook(request)
    assert answer.status_code == 413 and b"larger than 64 KB" in answer.content
    assert not hasattr(request, "_body"), "the body was read"
    assert not ProlificWebhookEvent.objects.exists()


def test_a_body_just_under_the_cap_is_still_read_and_checked(client, started):
    pad = "x" * (WEBHOOK_MAX_BYTES - 200)
    raw = json.dumps({"event_id": "big", "event_type": "noted", "pad": pad}).encode()
    assert len(raw) <= WEBHOOK_MAX_BYTES
    assert deliver(client, raw).status_code == 200
    assert ProlificWebhookEvent.objects.get().event_id == "big"
    unsigned = client.post(WEBHOOK_URL, raw, content_type="application/json")
    assert unsigned.status_code == 403  # the signature is what refuses it
