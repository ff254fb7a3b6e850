"""gunicorn's settings for `gunicorn config.wsgi` (gunicorn reads this file from the working directory).

Command-line flags and GUNICORN_CMD_ARGS still override what is set here.
"""

import os

from config.runtime import warmup

# One more sync worker than cores: each request is mostly CPU (Django, the template) with a short wait
# on the database, which here shares the machine. Measured on two cores with 50 annotators arriving at
# once (bench/bench_annotators.py): 3 workers gave the lowest HIT-page p99; 4 and more switch between
# runnable processes without adding throughput. WEB_CONCURRENCY sets another number (as on Heroku and
# most platforms); where the database runs on its own machine, 2 x cores + 1 is the usual choice.
workers = int(os.environ.get("WEB_CONCURRENCY") or (os.cpu_count() or 1) + 1)
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
