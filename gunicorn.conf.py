"""gunicorn's settings for `gunicorn config.wsgi` (gunicorn reads this file from the working directory).

Command-line flags and GUNICORN_CMD_ARGS still override what is set here.
"""

import os

# One more sync worker than cores: each request is mostly CPU (Django, the template) with a short wait
# on the database, which here shares the machine. Measured on two cores with 50 annotators arriving at
# once (bench/bench_annotators.py): 3 workers gave the lowest HIT-page p99; 4 and more switch between
# runnable processes without adding throughput. WEB_CONCURRENCY sets another number (as on Heroku and
# most platforms); where the database runs on its own machine, 2 x cores + 1 is the usual choice.
workers = int(os.environ.get("WEB_CONCURRENCY") or (os.cpu_count() or 1) + 1)
worker_class = "sync"
