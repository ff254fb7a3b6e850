"""Warm a server or worker process at boot: import what its first request or task would wait for.

Loading the apps imports no heavy library (tests/test_startup.py): commands start in under a second,
and the first request or task that computes with torch, scipy.stats or matplotlib imports it then.
A process that is going to serve such work imports it at boot instead, before it takes any:
- gunicorn's master, in `when_ready` (gunicorn.conf.py), before it forks its workers: each worker
  starts with the libraries loaded, their pages shared copy-on-write, imported once for all;
- each Celery worker process, on `worker_process_init` (config/celery.py), before its first task.
`RATELAB_WARMUP=0` turns it off (a small machine that never trains ADEM, or to measure the gain:
bench/bench_warmup.py).

`warm` only imports, named here by module: nothing runs, no model or data file is opened, so it
cannot fail on a missing checkpoint or change a result.

`warm_models_in_background` goes further, in a process that will compute metrics (a worker process;
the web process when it runs the tasks itself): on a thread of its own after boot, it loads what a
first metric run would otherwise wait for (scoring.metrics.resources: the MiniLM model, the METEOR
jar, NLTK and WordNet, the GloVe vectors; 15-35 s of a 2-core machine, measured by
bench/bench_warmup.py). A run that needs one of them meanwhile waits for that load instead of
starting its own. It costs memory, per pool process: about 1.1 GB resident in the process and as
much for the METEOR JVM beside it (measured on a prefork worker), which that process would reach
anyway on its first run of every metric. A worker with many pool processes that rarely computes
metrics can turn it off with RATELAB_WARM_MODELS=0 (the first run then loads, and the page says so).
"""

import importlib
import logging
import threading
import time

from config.env import env_bool

logger = logging.getLogger("config.warmup")  # its name before the move: log settings (and tests) name it

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


def models_enabled():
    return enabled() and env_bool("RATELAB_WARM_MODELS", True)


def warm_models_in_background():
    """Start loading the metric engine's models on a daemon thread; the thread, or None when disabled."""
    if not models_enabled():
        return None
    thread = threading.Thread(target=_load_models, name="ratelab-warm-models", daemon=True)
    thread.start()
    return thread


def _load_models():
    start = time.perf_counter()
    try:
        importlib.import_module("scoring.metrics")  # registers every family and the resources it loads
        took = importlib.import_module("scoring.metrics.resources").load_all()
    except Exception:  # never stop a worker for a warm-up: its first run loads and reports as before
        logger.exception("warm-up of the metric models failed")
        return
    logger.info(
        "warm-up: metric models loaded in %.1f s (%s)",
        time.perf_counter() - start,
        ", ".join(f"{key} {seconds:.1f} s" for key, seconds in took.items()) or "all there already",
    )


def web_modules(*, tasks_in_process):
    """What a web process imports at boot; without a broker it also runs the tasks (config/runtime/background.py)."""
    return WEB + WORKER if tasks_in_process else WEB
