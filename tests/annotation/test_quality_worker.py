"""A real Celery worker recomputes a survey's quality report queued by `quality_mark_dirty`.

Runs only with a broker (CELERY_BROKER_URL) and PostgreSQL, so the worker process reads the
test database that this test writes.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache

from annotation.quality.selectors import cached_report
from annotation.quality.services import quality_mark_dirty
from tests.annotation.collected import build_collected_survey

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.worker, pytest.mark.postgres]


@pytest.fixture
def celery_worker_process(transactional_db):
    if not settings.CELERY_BROKER_URL:
        pytest.skip("needs CELERY_BROKER_URL")
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("needs PostgreSQL: the worker must read the test database")
    host = database.get("HOST") or "127.0.0.1"
    port = database.get("PORT") or 5432
    user = database.get("USER") or "postgres"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{user}@{host}:{port}/{database['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-l", "warning"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    yield worker
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def test_a_real_worker_recomputes_the_report_after_the_debounce(celery_worker_process, researcher, settings):
    settings.QUALITY_DEBOUNCE_SECONDS = 1
    cache.clear()
    survey = build_collected_survey(owner=researcher)
    assert cached_report(survey=survey) == (None, False)

    quality_mark_dirty(survey=survey)  # autocommit: queued at once, runs after the countdown

    deadline = time.monotonic() + 60
    content, fresh = None, False
    while time.monotonic() < deadline and not fresh:
        time.sleep(0.5)
        content, fresh = cached_report(survey=survey)
    assert fresh, "the worker did not recompute the report within 60 s"
    assert content["n_ratings"] == 144
    assert {a["worker"] for a in content["annotators"] if a["excluded"]} == {"careless", "hasty", "inattentive"}
