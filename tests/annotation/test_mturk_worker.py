"""A real Celery worker, on the broker in CELERY_BROKER_URL, retries a throttled publish with backoff."""

import os

import pytest
from celery.contrib.testing.worker import start_worker

from annotation.crowd.mturk.tasks import publish_survey_hits
from annotation.models.mturk import MTurkHIT
from config.celery import app
from tests.annotation.mturk_helpers import expect_create_hit, expect_prelude, install_stub, make_survey

pytestmark = [
    pytest.mark.worker,
    pytest.mark.skipif(not os.environ.get("CELERY_BROKER_URL"), reason="needs CELERY_BROKER_URL (a real broker)"),
]


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_retries_a_throttled_publish_and_creates_each_hit_once(monkeypatch, settings, researcher):
    assert not app.conf.task_always_eager
    _, stubber = install_stub(monkeypatch, settings)
    survey = make_survey(researcher, n_hits=2)
    first, second = survey.hits.order_by("position")
    expect_prelude(stubber, survey)
    expect_create_hit(stubber, survey, first, 0)
    stubber.add_client_error(
        "create_hit_with_hit_type", service_error_code="ThrottlingException", service_message="Rate exceeded"
    )
    expect_prelude(stubber, survey, new_qualification=False)
    expect_create_hit(stubber, survey, second, 1)

    app.control.purge()
    with stubber, start_worker(app, perform_ping_check=False, shutdown_timeout=20):
        result = publish_survey_hits.delay(survey.pk)
        assert result.get(timeout=60) == {"created": 1, "pending": 0, "hit_type_id": "3HITTYPE0000000000000000000000"}
        stubber.assert_no_pending_responses()
    assert sorted(MTurkHIT.objects.values_list("hit__position", flat=True)) == [0, 1]
