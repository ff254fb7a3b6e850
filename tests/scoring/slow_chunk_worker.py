"""A real Celery worker whose metric chunks each take SLOW_CHUNK_SECONDS longer (reports
SLOW_REPORT_SECONDS longer, ADEM training SLOW_TRAIN_SECONDS longer), for the tests that kill it
mid-run (tests/scoring/test_worker_lost.py, tests/scoring/test_training_worker_lost.py,
tests/analysis/test_worker_lost_report.py).

    python -m tests.scoring.slow_chunk_worker worker -c 2 ...

The worker is Celery's own (prefork pool, the broker in CELERY_BROKER_URL); only the pure
scoring engine is wrapped, before the pool forks, so that a run lasts long enough to be
interrupted at a chosen point. Everything the tests check (acks, redelivery, the watchdog, the
database writes) is the production code.
"""

import os
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

import analysis.services.build  # noqa: E402 (after django.setup)
import scoring.adem.pipeline as adem_pipeline  # noqa: E402
import scoring.metrics as engine  # noqa: E402
from config.celery import app  # noqa: E402


def slowed(function, seconds):
    def slow(*args, **kwargs):
        time.sleep(seconds)
        return function(*args, **kwargs)

    return slow


engine.score = slowed(engine.score, float(os.environ.get("SLOW_CHUNK_SECONDS", "1")))
analysis.services.build._compute = slowed(
    analysis.services.build._compute, float(os.environ.get("SLOW_REPORT_SECONDS", "0"))
)
adem_pipeline.train_and_evaluate = slowed(
    adem_pipeline.train_and_evaluate, float(os.environ.get("SLOW_TRAIN_SECONDS", "0"))
)

if __name__ == "__main__":
    app.worker_main(sys.argv[1:])
