"""Helpers for the Prolific tests: a small Prolific survey, and Prolific's documented answers.

The only fake is respx in front of the real httpx client: each route is a documented Prolific
request (method, path, body) answered with the documented shape.
"""

import base64
import hashlib
import hmac
import json
import time

import httpx
import pytest
import respx

from annotation.crowd.prolific.api import ProlificClient
from annotation.crowd.prolific.provider import ProlificProvider
from annotation.crowd.prolific.study import study_settings
from annotation.models import Assignment, Survey
from tests.annotation.mturk_helpers import make_survey

API = "https://prolific.test/api/v1/"
PUBLIC_BASE_URL = "https://ratelab.example.org"
STUDY_ID = "60aca280709ee40ec37d4885"
TOKEN = "prolific-test-token-not-a-secret"
WEBHOOK_SECRET = "webhook-secret-for-tests"


def pid(n):
    return f"5f{n:022d}"


def session(n):
    return f"6a{n:022d}"


@pytest.fixture
def prolific_env(monkeypatch, settings):
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    settings.PROLIFIC_API_URL = API
    settings.PUBLIC_BASE_URL = PUBLIC_BASE_URL
    settings.PROLIFIC_WEBHOOK_SECRET = WEBHOOK_SECRET


@pytest.fixture
def api(prolific_env):
    with respx.mock(base_url=API, assert_all_called=False) as router:
        yield router


def make_prolific_survey(
    owner, *, n_hits=2, assignments=2, reward_cents=150, minutes=10, name="prolific-study", **extra
):
    survey = make_survey(owner, n_hits=n_hits, assignments=assignments, name=name, **extra)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.PROLIFIC)
    survey.refresh_from_db()
    study_settings(survey, reward_cents=reward_cents, minutes=minutes)
    return survey


def provider(sleeps=None):
    return ProlificProvider(client=ProlificClient(sleep=(sleeps if sleeps is not None else []).append))


def study_answer(*, status="UNPUBLISHED", places=4):
    """A study as Prolific answers POST studies/ and GET studies/{id}/ (fields we read)."""
    return {"id": STUDY_ID, "status": status, "total_available_places": places, "name": "Rate replies"}


def workspace_balance(*, currency="GBP", available=50_000):
    """GET workspaces/{id}/balance/ as documented: the workspace's `currency_code` and its funds
    in that currency's minor unit."""
    return {"currency_code": currency, "total_balance": available, "available_balance": available}


def publish(api, survey):
    """Publish through the documented create + PUBLISH transition; returns the create route. A
    server that names its workspace first reads the workspace's currency (GBP here)."""
    api.get(url__regex=r"workspaces/[^/]+/balance/$").mock(return_value=httpx.Response(200, json=workspace_balance()))
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json=study_answer(status="ACTIVE"))
    )
    provider().publish(survey=survey)
    return created


def entry(client, survey, *, participant, session_id, study=STUDY_ID, method="post"):
    params = {"PROLIFIC_PID": participant, "STUDY_ID": study, "SESSION_ID": session_id}
    url = f"/p/{survey.token}/"
    return client.post(url, params) if method == "post" else client.get(url, params)


def do_task(client, response, *, score=4):
    """From a claim's redirect, answer every item of the task and submit."""
    token = response["Location"].rstrip("/").split("/")[-1]
    slot = Assignment.objects.get(token=token)
    data = {}
    for item in slot.hit.items.all():
        data[f"score-{item.pk}-overall"] = "2" if item.kind == "instructed" else str(score)
    return client.post(response["Location"], data)


def submissions_answer(*rows):
    """GET studies/{id}/submissions/ as documented: `results` of id, participant_id, status, study_id."""
    return {
        "results": [
            {
                "id": sid,
                "participant_id": who,
                "status": status,
                "study_id": STUDY_ID,
                "started_at": "2026-11-24T09:00:00Z",
            }
            for sid, who, status in rows
        ],
        "_links": {"next": {"href": None}},
    }


def signed(body, *, timestamp, secret=WEBHOOK_SECRET):
    raw = json.dumps(body).encode()
    signature = base64.b64encode(hmac.new(secret.encode(), str(timestamp).encode() + raw, hashlib.sha256).digest())
    return raw, signature.decode()


WEBHOOK_URL = "/prolific/hooks/"


def deliver(client, body, *, timestamp=None, secret=None, signature=None):
    """POST a webhook event to RateLab as Prolific signs it (a good signature unless one is given)."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    raw, good = signed(body, timestamp=timestamp, **({"secret": secret} if secret else {}))
    return client.post(
        WEBHOOK_URL,
        raw,
        content_type="application/json",
        headers={"X-Prolific-Request-Signature": signature or good, "X-Prolific-Request-Timestamp": str(timestamp)},
    )


def confirmed_assignment(client, survey, api, *, n=1):
    """Participant n does a task and a sync finds Prolific listing their session: their submitted slot."""
    do_task(client, entry(client, survey, participant=pid(n), session_id=session(n)))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(n), pid(n), "AWAITING REVIEW")))
    )
    provider().sync(survey=survey)
    return Assignment.objects.get(annotator__worker_id=pid(n), status=Assignment.Status.SUBMITTED)


@pytest.fixture
def started(client, researcher, api):
    """A published Prolific survey that one participant (pid 1, session 1) has entered."""
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    entry(client, survey, participant=pid(1), session_id=session(1))
    client.cookies.clear()
    return survey
