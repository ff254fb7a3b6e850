"""A real Celery worker whose metric chunks each take SLOW_CHUNK_SECONDS longer, for the tests
that kill it mid-run (tests/scoring/test_worker_lost.py).

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

import scoring.metrics as engine  # noqa: E402 (after django.setup)
from config.celery import app  # noqa: E402

DELAY = float(os.environ.get("SLOW_CHUNK_SECONDS", "1"))
_score = engine.score


def _slow_score(*args, **kwargs):
    time.sleep(DELAY)
    return _score(*args, **kwargs)


engine.score = _slow_score

if __name__ == "__main__":
    app.worker_main(sys.argv[1:])
