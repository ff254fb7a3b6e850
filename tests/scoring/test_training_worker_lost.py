"""ADEM training restarts at once after its pool process is killed: Celery redelivers the message
within a second and the redelivered task takes over from the dead holder, without the watchdog
(which here could not act for ten minutes); a duplicate message while the holder lives trains
nothing. One model comes out, ready (security review 2026-11-29, point 7).

Needs the CI's services (skipped without them):
    CELERY_BROKER_URL=redis://127.0.0.1:6379/8 DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_workers \\
        pytest -m worker tests/scoring/test_training_worker_lost.py
The worker is tests/scoring/slow_chunk_worker.py (Celery's own, prefork, -c 2) with each training
made SLOW_TRAIN_SECONDS slower, so that it can be killed mid-training.
"""

import os
import signal
import time

import pytest

from scoring.models import AdemModel, TrainingRun
from scoring.services.adem.jobs import adem_train_queue
from scoring.tasks import adem_train_task
from tests.factories import load_dataset_records, load_rating_records
from tests.scoring.test_worker_lost import Worker, services_ready  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.slow]

SYSTEMS = ("a", "b", "c")
TEXTS = {"a": "we went hiking in the hills", "b": "it rained all weekend", "c": "i do not know"}
RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["hello", "how was the weekend?"],
        "references": ["we went hiking in the hills"],
        "responses": [{"system": system, "text": f"{TEXTS[system]} {i}"} for system in SYSTEMS],
    }
    for i in range(12)
]
RATINGS = [
    {"context_id": f"c{i}", "system": system, "worker": "w1", "score": {"a": 5, "b": 3, "c": 2}[system] - (i % 2)}
    for i in range(12)
    for system in SYSTEMS
]


def wait_for(condition, timeout, worker, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        assert worker.process.poll() is None, worker.output()
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout} s\n{worker.output()}")


def run_row(run):
    run.refresh_from_db()
    return run


def test_adem_training_restarts_at_once_after_its_pool_process_is_killed_with_one_model(
    services_ready,  # noqa: F811
    researcher,
    tmp_path,
):
    dataset = load_dataset_records(records=RECORDS, name="adem-lost", owner=researcher)
    load_rating_records(records=RATINGS, dataset=dataset, survey_name="adem-lost-ratings", owner=researcher)
    worker = Worker(
        tmp_path,
        "adem",
        SLOW_TRAIN_SECONDS="4",
        RATELAB_DATA_DIR=str(tmp_path / "data"),
        # a heartbeat is taken over once two beats old (60 s): what restarts the run here is not that either
        RUN_HEARTBEAT_SECONDS="30",
        # the watchdog could act only after ten minutes: whatever restarts the run here, it is not
        RUN_STALL_SECONDS="600",
        RUN_WATCHDOG_SECONDS="600",
    )
    try:
        run = adem_train_queue(dataset=dataset, name="lost-once", owner=researcher, encoder="glove")
        wait_for(lambda: run_row(run).status == TrainingRun.Status.RUNNING and run.worker, 90, worker, "the start")
        first_holder = run.worker
        assert run.attempts == 1

        # a duplicate message while the holder lives: the other pool process drops it
        duplicate = adem_train_task.delay(run.pk)
        wait_for(lambda: f"[{duplicate.id}] succeeded" in worker.log.read_text(), 30, worker, "the duplicate")
        assert (run_row(run).attempts, run.worker) == (1, first_holder)

        # the holder killed mid-training (the slowed training sleeps 4 s before it trains)
        os.kill(int(first_holder.rsplit("|", 2)[1]), signal.SIGKILL)
        killed = time.monotonic()
        wait_for(lambda: run_row(run).attempts == 2, 30, worker, "the redelivered task's takeover")
        taken_over = time.monotonic()
        assert run.worker != first_holder
        wait_for(lambda: run_row(run).status != TrainingRun.Status.RUNNING, 120, worker, "the end of the run")
        done = time.monotonic()
        print(f"\ntaken over {taken_over - killed:.1f} s after the kill, done {done - killed:.1f} s after it")
    finally:
        worker.stop()

    assert run.status == TrainingRun.Status.DONE, (run.error, worker.output())
    assert run.attempts == 2
    models = AdemModel.objects.filter(owner=researcher)
    assert [(m.name, m.status) for m in models] == [("lost-once", AdemModel.Status.READY)]
    assert len(list((tmp_path / "data" / "adem" / "models").glob("*.ckpt"))) == 1
    log = worker.log.read_text()
    assert "watchdog:" not in log
    assert "WorkerLostError" in log or "Process" in log  # Celery saw its pool process die
