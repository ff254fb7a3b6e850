"""A real Celery worker computes judge:<name> in chunks against the test's chat server.

Run with PostgreSQL and Redis, as the other `worker` tests:
    CELERY_BROKER_URL=redis://127.0.0.1:6379/15 DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_judges \
        pytest -m worker tests/scoring/test_judges_worker.py
"""

import os
import subprocess
import sys
import time

import pytest

from scoring.models import JudgeUsage, MetricRun
from scoring.selectors.scores import metric_scores
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS, make_judge, scoring_server
from tests.scoring.test_judges_metric import expected_scores
from tests.scoring.test_metrics_worker import ROOT, worker_database_url


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_worker_judges_every_response_in_chunks(researcher, chat_server, monkeypatch, settings):
    if not settings.CELERY_BROKER_URL:
        pytest.skip("CELERY_BROKER_URL is unset: no broker to run a real worker against")
    monkeypatch.setenv("RATELAB_WORKER_JUDGE_KEY", "sk-worker")  # the web side checks it too
    settings.JUDGE_KEY_VARIABLES = {"*": ("RATELAB_WORKER_JUDGE_KEY",)}
    dataset = load_dataset_records(records=RECORDS, name="judged", owner=researcher)
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server, api_key_env="RATELAB_WORKER_JUDGE_KEY")
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "PYTHONPATH": str(ROOT),
        "RATELAB_WORKER_JUDGE_KEY": "sk-worker",
        # the operator's settings, on the worker as on the web side
        "JUDGE_KEY_VARIABLES": "*:RATELAB_WORKER_JUDGE_KEY",
        "JUDGE_ALLOW_PRIVATE_HOSTS": "1",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--loglevel=WARNING",
         "-n", "ratelab-judges-test@%h"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        run = services.metrics_compute(dataset=dataset, metrics=["judge:local"], chunk_size=4)
        assert run.total_chunks == 3
        deadline = time.monotonic() + 180
        while run.status not in (MetricRun.Status.DONE, MetricRun.Status.FAILED) and time.monotonic() < deadline:
            time.sleep(0.5)
            run.refresh_from_db()
            assert worker.poll() is None, worker.stdout.read().decode()
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode()
    assert run.status == MetricRun.Status.DONE, output
    assert metric_scores(dataset=dataset)["judge:local"] == expected_scores(dataset)
    assert {auth for _, _, auth in chat_server.requests} == {"Bearer sk-worker"}
    assert len(chat_server.requests) == 12 and JudgeUsage.objects.get(run=run).requests == 12
    assert "sk-worker" not in output
