"""Warm a server or worker process at boot: import what its first request or task would wait for.

Loading the apps imports no heavy library (tests/test_startup.py): commands start in under a second,
and the first request or task that computes with torch, scipy.stats or matplotlib imports it then.
A process that is going to serve such work imports it at boot instead, before it takes any:
- gunicorn's master, in `when_ready` (gunicorn.conf.py), before it forks its workers: each worker
  starts with the libraries loaded, their pages shared copy-on-write, imported once for all;
- each Celery worker process, on `worker_process_init` (config/celery.py), before its first task.
`RATELAB_WARMUP=0` turns it off (a small machine that never trains ADEM, or to measure the gain:
bench/bench_warmup.py).

Only imports, named here by module: nothing runs, no model or data file is opened, so a warm-up
cannot fail on a missing checkpoint or change a result.
"""

import importlib
import logging
import time

from config.env import env_bool

logger = logging.getLogger(__name__)

# What a web request computes with: report plots (analysis/plots.py), a learning curve
# (scoring/adem/plots.py) and ADEM scores through the API (scoring.adem.pipeline: torch).
WEB = ("matplotlib", "matplotlib.pyplot", "scoring.adem.plots", "scoring.adem.pipeline")
# What the tasks compute with: the metric engine (pyarrow; pandas for GloVe's word index), the report's statistics
# (scipy.stats, scikit-learn's kappa), ADEM training, experiments and VHRED pre-training (torch).
WORKER = (
    "pandas",
    "pyarrow.compute",
    "pyarrow.parquet",
    "scipy.stats",
    "sklearn.metrics",
    "scoring.adem.pipeline",
    "scoring.adem.experiments",
    "scoring.adem.vhred.pretrain",
)


def enabled():
    return env_bool("RATELAB_WARMUP", True)  # a value other than 1/0, true/false... stops the process, naming it


def warm(modules):
    """Import `modules` (a no-op for those already loaded); the seconds it took, or None when disabled."""
    if not enabled():
        return None
    start = time.perf_counter()
    for name in modules:
        importlib.import_module(name)
    seconds = time.perf_counter() - start
    logger.info("warm-up: %d modules in %.2f s", len(modules), seconds)
    return seconds


def web_modules(*, tasks_in_process):
    """What a web process imports at boot; without a broker it also runs the tasks (config/background.py)."""
    return WEB + WORKER if tasks_in_process else WEB
