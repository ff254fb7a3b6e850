"""A real Celery worker computes metrics against the real broker and the test database.

Run with e.g.
    CELERY_BROKER_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_metrics \
        pytest -m worker tests/scoring/test_metrics_worker.py
The worker is a subprocess that reads the test database pytest-django created, so the test
commits its data (transactional_db) and passes that database's URL to the worker.
"""

import gc
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery.signals import worker_process_init, worker_ready
from django.conf import settings
from django.db import connection

import scoring.metrics as engine
from annotation.models import Response
from scoring.models import MetricRun, MetricScore
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [
    {
        "context_id": f"w{i}",
        "context": ["hello", "what did you do today?"],
        "references": ["i went to the park with my dog"],
        "responses": [
            {"system": "a", "text": ["i went to the park", "nothing much", "my dog and i went out"][i % 3]},
            {"system": "b", "text": "i stayed at home today"},
        ],
    }
    for i in range(30)
]


def worker_database_url():
    db = connection.settings_dict
    if db["ENGINE"].endswith("postgresql"):
        host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        return f"postgres://{db['USER']}@{host}/{db['NAME']}"
    if db["ENGINE"].endswith("sqlite3") and db["NAME"] and "memory" not in str(db["NAME"]):
        return f"sqlite:///{db['NAME']}"
    pytest.skip("the worker cannot see an in-memory SQLite test database; use DATABASE_URL=postgres://...")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_worker_computes_metric_scores(researcher):
    if not settings.CELERY_BROKER_URL:
        pytest.skip("CELERY_BROKER_URL is unset: no broker to run a real worker against")
    dataset = load_dataset_records(records=RECORDS, name="worker-toy", owner=researcher)
    env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "-n",
            "ratelab-metrics-test@%h",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        run = services.metrics_compute(dataset=dataset, metrics=["bleu4", "rouge_l", "cider"], chunk_size=20)
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
    assert run.done_chunks == 3
    responses = list(Response.objects.filter(context__dataset=dataset).order_by("id").values_list("id", "text"))
    expected = engine.score([t for _, t in responses], [[RECORDS[0]["references"][0]]] * len(responses), ["bleu4"])
    stored = dict(MetricScore.objects.filter(metric="bleu4").values_list("response_id", "value"))
    assert [stored[rid] for rid, _ in responses] == pytest.approx(expected["bleu4"], abs=1e-12)
    assert MetricScore.objects.filter(response__context__dataset=dataset).count() == 3 * len(responses)


def test_worker_processes_freeze_their_startup_objects():
    """A Celery worker process leaves what it loaded at start-up out of full garbage collections."""
    for signal in (worker_process_init, worker_ready):
        gc.unfreeze()
        signal.send(sender=None)
        try:
            assert gc.get_freeze_count() > 0
        finally:
            gc.unfreeze()
