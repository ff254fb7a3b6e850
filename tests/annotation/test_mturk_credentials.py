"""AWS credentials come from boto3's standard chain and never reach the database, logs or pages."""

import logging

import pytest
from botocore.stub import Stubber
from django.apps import apps
from django.core import serializers
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import provider as mturk_module
from annotation.crowd.mturk.provider import MTurkProvider
from annotation.models import Assignment
from annotation.models.mturk import MTurkSettings
from annotation.services import mturk as services
from tests.annotation.mturk_helpers import (
    HIT_TYPE_ID,
    PUBLIC_BASE_URL,
    assignment_id,
    assignment_shape,
    hit_id,
    make_survey,
    publish_all,
)

ACCESS_KEY = "TESTKEYRATELABSECRET042"  # fake; deliberately not shaped like a real AWS key id
SECRET_KEY = "rAtElAb/Secret+Key/NeverStore0123456789xyz"


def dump_database():
    """Every row of every table, as JSON text."""
    return "".join(serializers.serialize("json", model._default_manager.all()) for model in apps.get_models())


@pytest.fixture
def env_client(monkeypatch, settings, db):
    """The app's own client factory, reading credentials from the environment like production."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    settings.PUBLIC_BASE_URL = PUBLIC_BASE_URL
    client = mturk_module.mturk_client(sandbox=True)
    monkeypatch.setattr(mturk_module, "mturk_client", lambda *, sandbox: client)
    return client


def test_the_client_takes_credentials_from_the_standard_chain(env_client):
    credentials = env_client._request_signer._credentials  # what botocore will sign with
    assert (credentials.access_key, credentials.secret_key) == (ACCESS_KEY, SECRET_KEY)
    assert env_client.meta.endpoint_url == "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
    assert env_client.meta.region_name == "us-east-1"


def test_no_credential_is_written_to_the_database_logs_or_pages(env_client, client, researcher, caplog):
    caplog.set_level(logging.DEBUG)
    survey = make_survey(researcher, n_hits=1)
    with Stubber(env_client) as stubber:
        hit_ids = publish_all(stubber, survey)
        task = reverse("annotation:mturk_task", args=[survey.token])
        worker = {"assignmentId": assignment_id(1), "hitId": hit_ids[0], "workerId": "AWORKERONE"}
        pages = [client.get(task, worker).content.decode()]
        slot = Assignment.objects.get(external_id=assignment_id(1))
        answers = {f"score-{item.pk}-overall": "2" for item in slot.hit.items.all()}
        pages.append(client.post(task, {**worker, **answers, "assignment_token": slot.token}).content.decode())

        stubber.add_response("list_reviewable_hits", {"NumResults": 0, "HITs": []}, None)
        stubber.add_response(
            "list_assignments_for_hit",
            {"NumResults": 1, "Assignments": [assignment_shape(1, hit=hit_id(0), worker="AWORKERONE")]},
            None,
        )
        MTurkProvider(sandbox=True).sync(survey=survey)
        stubber.add_client_error("approve_assignment", service_error_code="RequestError", service_message="Nope")
        with pytest.raises(ProviderError) as refused:
            services.mturk_approve(assignment=slot)
        stubber.add_response("get_account_balance", {"AvailableBalance": "12.00"}, {})
        client.force_login(researcher)
        pages.append(client.get(reverse("annotation:mturk_survey", args=[survey.pk]), {"balance": 1}).content.decode())
        stubber.assert_no_pending_responses()

    assert "$12.00" in pages[-1] and HIT_TYPE_ID in dump_database()  # the run really wrote and rendered
    for text in (dump_database(), caplog.text, str(refused.value), *pages):
        assert ACCESS_KEY not in text
        assert SECRET_KEY not in text


def test_settings_hold_no_credential_fields():
    names = {field.name for field in MTurkSettings._meta.get_fields()}
    suspicious = ("secret", "access_key", "password", "credential", "token")
    assert not [name for name in names if any(word in name for word in suspicious)]
