"""A metric run finishes, every score stored once, after its worker dies mid-run: first one pool
process killed with SIGKILL, then the whole worker; the worker is started again.

Needs the CI's services (skipped without them):
    CELERY_BROKER_URL=redis://127.0.0.1:6379/8 DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_workers \\
        pytest -m worker tests/scoring/test_worker_lost.py
The worker (`-c 2`, prefork, with beat for the watchdog) runs tests/scoring/slow_chunk_worker.py,
Celery's worker with each chunk made one second slower so that it can be killed mid-chunk. The
watchdog's intervals are shortened through the environment, as a deployment would set them.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import Count

from annotation.models import Response
from config.celery import app as celery_app
from scoring.models import MetricChunk, MetricRun, MetricScore
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.slow]

RECORDS = [
    {
        "context_id": f"lost{i}",
        "context": ["hello", "how was the weekend?"],
        "references": ["we went hiking in the hills"],
        "responses": [
            {"system": "a", "text": ["we went hiking", "it rained all weekend", "i stayed in"][i % 3]},
            {"system": "b", "text": "we went to the hills"},
        ],
    }
    for i in range(24)
]
METRICS = ["bleu2", "rouge_l", "length_diff"]
CHUNK_SIZE = 4  # 48 responses: 12 chunks of about 1 s each on two processes


class Worker:
    """`celery worker -c 2 -B` in its own process group, so that all of it can be killed at once."""

    def __init__(self, tmp_path, name, **extra_env):
        database = settings.DATABASES["default"]
        host = f"{database.get('HOST') or '127.0.0.1'}:{database.get('PORT') or 5432}"
        env = {
            **os.environ,
            "DATABASE_URL": f"postgres://{database.get('USER') or 'postgres'}@{host}/{database['NAME']}",
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "PYTHONPATH": str(ROOT),
            "SLOW_CHUNK_SECONDS": "1",
            "RUN_HEARTBEAT_SECONDS": "1",
            "RUN_STALL_SECONDS": "5",
            "RUN_WATCHDOG_SECONDS": "2",
            **extra_env,
        }
        self.log = tmp_path / f"{name}.log"
        self.name = f"ratelab-lost-{name}@{socket.gethostname()}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.scoring.slow_chunk_worker",
                "worker",
                "-c",
                "2",
                "-B",
                "--schedule",
                str(tmp_path / "beat-schedule"),
                "--loglevel=INFO",
                "-n",
                self.name,
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def pool_processes(self):
        """The prefork pool's process ids, as the worker reports them (beat's process is not one)."""
        stats = celery_app.control.inspect(destination=[self.name], timeout=5).stats() or {}
        assert stats, f"the worker did not answer\n{self.output()}"
        return stats[self.name]["pool"]["processes"]

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def output(self):
        return self.log.read_text(errors="replace")[-4000:]


def _wait(run, condition, timeout, worker):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if condition(run):
            return run
        assert worker.process.poll() is None, worker.output()
        time.sleep(0.1)
    raise AssertionError(f"run {run.pk} still at {run.done_chunks}/{run.total_chunks}, {run.status}\n{worker.output()}")


@pytest.fixture
def services_ready(transactional_db):
    if not settings.CELERY_BROKER_URL:
        pytest.skip("needs CELERY_BROKER_URL: a real worker needs a broker")
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("needs PostgreSQL: the worker must read the test database")


def test_a_metric_run_finishes_with_every_score_once_after_its_pool_process_and_then_its_worker_are_killed(
    services_ready, researcher, tmp_path
):
    dataset = load_dataset_records(records=RECORDS, name="worker-lost", owner=researcher)
    worker = Worker(tmp_path, "first")
    try:
        started = time.monotonic()
        run = services.metrics_compute(dataset=dataset, metrics=METRICS, chunk_size=CHUNK_SIZE)
        assert run.total_chunks == 12

        # 1. one pool process killed while it scores a chunk: Celery re-queues that chunk at once
        _wait(run, lambda r: r.done_chunks >= 2, 60, worker)
        time.sleep(0.3)  # into the next chunk's one-second score
        os.kill(worker.pool_processes()[0], signal.SIGKILL)
        killed_child_at = run.done_chunks

        # 2. the whole worker killed mid-run: its two chunks stay unacknowledged in Redis
        _wait(run, lambda r: r.done_chunks >= 6, 60, worker)
        time.sleep(0.3)
        worker.kill()
        run.refresh_from_db()
        killed_worker_at = run.done_chunks
        assert run.status == MetricRun.Status.RUNNING and killed_worker_at < run.total_chunks

        # 3. a new worker: the queued chunks, then the watchdog re-queues the two lost ones
        worker = Worker(tmp_path, "second")
        restarted = time.monotonic()
        _wait(run, lambda r: r.status != MetricRun.Status.RUNNING, 120, worker)
        finished = time.monotonic()
    finally:
        worker.stop()

    assert run.status == MetricRun.Status.DONE, (run.error, worker.output())
    assert run.error == ""
    assert run.done_chunks == run.total_chunks == 12
    assert set(run.chunks.values_list("status", flat=True)) == {MetricChunk.Status.DONE}
    # The kills hit work in flight: some chunk ran again. Usually three do (the killed pool process's
    # chunk and the killed worker's two), but on a loaded machine a process can be killed between two
    # chunks (seen once in CI: two re-runs), so only "at least one" is certain; the run's outcome
    # above and the scores below are what must hold whatever the timing.
    attempts = sorted(run.chunks.values_list("attempts", flat=True))
    assert sum(a - 1 for a in attempts) >= 1, attempts
    responses = Response.objects.filter(context__dataset=dataset).count()
    scores = MetricScore.objects.filter(response__context__dataset=dataset)
    assert scores.count() == responses * len(METRICS)
    assert not scores.values("response", "metric").annotate(n=Count("pk")).filter(n__gt=1).exists()
    assert scores.filter(value__isnull=True).count() == 0
    print(
        f"\nchild killed at {killed_child_at}/12, worker killed at {killed_worker_at}/12;"
        f" run done {finished - restarted:.1f} s after the restart, {finished - started:.1f} s in all;"
        f" chunk attempts {attempts}"
    )


def test_a_chunk_past_the_time_limit_fails_its_run_naming_the_limit_and_is_not_redelivered(
    services_ready, researcher, tmp_path
):
    """The time limits still hold with late acks and re-queueing on a lost worker: the soft limit
    ends the chunk with an error on the run, and the hard limit's kill is not taken for a lost worker."""
    dataset = load_dataset_records(records=RECORDS[:4], name="time-limit", owner=researcher)
    worker = Worker(tmp_path, "limit", SLOW_CHUNK_SECONDS="8", CELERY_TASK_TIME_LIMIT="3")
    try:
        run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=100)
        _wait(run, lambda r: r.status not in (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING), 90, worker)
        time.sleep(8)  # a redelivery, if any, would have started again by now (the watchdog's stall: 5 s)
        run.refresh_from_db()
    finally:
        worker.stop()
    assert run.status == MetricRun.Status.FAILED, worker.output()
    assert run.error.startswith("chunk 0 ran past its time limit (2.4 s, the soft limit of CELERY_TASK_TIME_LIMIT=3)")
    assert list(run.chunks.values_list("attempts", "status")) == [(1, MetricChunk.Status.FAILED)]
    assert not MetricScore.objects.filter(response__context__dataset=dataset).exists()
