"""gunicorn's settings for `gunicorn config.wsgi` (gunicorn reads this file from the working directory).

Command-line flags and GUNICORN_CMD_ARGS still override what is set here.
"""

import os

from config.runtime import warmup

# As many sync workers as cores (at least two): each request is mostly CPU (Django, the template) with a
# short wait on the database, which here shares the machine. Measured on two cores with 50 annotators
# pressing Start at once (bench/bench_annotators.py, 2026-11-29 evening): a conversation HIT's page p99
# was 212-282 ms with 2 workers against 290-365 ms with 3 (cores + 1, the default until then), a
# rating HIT's 267-275 ms against 272-282 ms, at the same throughput; a third worker only competes
# with PostgreSQL for the two cores in a burst (4 had been worse than 3 on 2026-11-24 for the same
# reason). WEB_CONCURRENCY sets another number (as on Heroku and most platforms); where the database
# runs on its own machine, 2 x cores + 1 is the usual choice.
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, os.cpu_count() or 1))
worker_class = "sync"


def when_ready(server):
    """In the master, before it forks the workers: import what requests compute with (config/runtime/warmup.py).

    Each worker then starts with torch, matplotlib and (without a broker, where the web process runs
    the tasks too) pandas and scipy.stats already loaded, shared copy-on-write, imported once for all.
    The apps themselves load in each worker, as before: only pure modules are imported here.
    """
    seconds = warmup.warm(warmup.web_modules(tasks_in_process=not os.environ.get("CELERY_BROKER_URL")))
    if seconds is not None:
        server.log.info("warm-up: heavy libraries imported in %.2f s before forking the workers", seconds)
