"""A report whose worker dies mid-computation is computed once a worker runs again: first its
pool processes killed with SIGKILL (Celery re-queues the task at once), then the whole worker
(the watchdog re-queues it). Needs Redis and PostgreSQL, as tests/scoring/test_worker_lost.py,
whose worker (computations made SLOW_REPORT_SECONDS slower) it starts."""

import os
import signal
import time

import pytest

from analysis.models import Report
from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create
from analysis.tasks.scheduling import report_request
from tests.scoring.test_worker_lost import Worker, services_ready  # noqa: F401 (services_ready: a fixture)

pytestmark = [pytest.mark.worker, pytest.mark.postgres, pytest.mark.slow, pytest.mark.shared_data]


def _wait(report, condition, timeout, worker):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report.refresh_from_db()
        if condition(report):
            return
        assert worker.process.poll() is None, worker.output()
        time.sleep(0.1)
    raise AssertionError(f"report {report.pk}: {report.status}, {report.attempts} starts\n{worker.output()}")


@pytest.mark.usefixtures("services_ready")
def test_a_report_is_computed_after_its_pool_processes_and_then_its_worker_are_killed(usr_study, tmp_path):
    dataset = usr_study[0]
    # The first worker's computations are far slower than the kills take: on a loaded host, asking the
    # worker for its pool's process ids took seconds, and a 4 s computation once finished before the
    # kill (the report ready, never redelivered). The last worker computes it at the usual pace.
    slow = {"SLOW_REPORT_SECONDS": "4", "ANALYSIS_BOOTSTRAP_SAMPLES": "50"}
    # The first part tests Celery's redelivery alone, so the first worker's watchdog waits far longer
    # than it does: on a loaded host the worker noticed its killed pool processes 4-5 s late, its
    # watchdog (5 s) re-queued the report as well, both copies started within milliseconds and the
    # count of starts went from 1 to 3 between two reads (CI: "ready, 0 starts" after the wait).
    first = {**slow, "SLOW_REPORT_SECONDS": "30", "RUN_STALL_SECONDS": "120"}
    worker = Worker(tmp_path, "report-first", **first)
    try:
        report = report_get_or_create(dataset=dataset, params=report_params())
        assert report_request(report=report)  # autocommit: queued at once
        _wait(report, lambda r: r.attempts >= 1, 90, worker)
        time.sleep(0.5)
        for pid in worker.pool_processes():
            os.kill(pid, signal.SIGKILL)
        _wait(report, lambda r: r.attempts >= 2, 60, worker)  # redelivered at once
        time.sleep(0.5)
        worker.kill()
        report.refresh_from_db()
        assert report.data is None and report.status == Report.Status.PENDING

        worker = Worker(tmp_path, "report-second", **slow)
        _wait(report, lambda r: r.status != Report.Status.PENDING, 120, worker)
    finally:
        worker.stop()
    # read again once the worker has stopped: the task marks the report ready, then (in its
    # `finally`) resets the count of starts, and the wait above may have read the row in between
    report.refresh_from_db()
    assert report.status == Report.Status.READY, (report.error, worker.output())
    assert report.error == "" and report.attempts == 0
    assert report.data["n_ratings"] == 900 and report.data["n_responses"] == 300
