"""Embedded mode (no broker): long work that a page starts runs on a few threads of the web process.

Without a broker Celery runs a task in the caller (CELERY_TASK_ALWAYS_EAGER), so pressing Compute
metrics held the request until every chunk was scored (~13 s for the demo). Tasks declared with
`base=EmbeddedInBackground` are handed instead to a small pool of threads of the web process,
once the request's transaction has committed (services queue with `transaction.on_commit`), and
the page answers at once and polls the run's progress.

Only the web process does this: `config/wsgi.py` calls `serve_in_background()`. Commands, shells
and tests keep Celery's eager behaviour (a command waits for its run; a test sees its result),
unless a test switches the pool on and waits for it with `drain()`. With a broker nothing here
applies: workers run the tasks. A web process that stops mid-run leaves the run to the watchdog
(`manage.py recover_runs`).
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor, wait

from celery import Task
from django.conf import settings
from django.db import connections

logger = logging.getLogger("config.background")  # its name before the move: log settings (and tests) name it

_lock = threading.Lock()
_state = {"enabled": False, "executor": None, "futures": set()}
_inside = threading.local()  # set in the pool's threads: what they queue runs in place


def serve_in_background(enabled=True):
    """Let this process run embedded tasks on its threads (the web process calls it at start)."""
    _state["enabled"] = enabled


def active(task):
    return (
        _state["enabled"]
        and task.app.conf.task_always_eager
        and settings.EMBEDDED_WORKER_THREADS > 0
        and not getattr(_inside, "working", False)
    )


def submit(task, args, kwargs):
    with _lock:
        if _state["executor"] is None:
            _state["executor"] = ThreadPoolExecutor(
                max_workers=settings.EMBEDDED_WORKER_THREADS, thread_name_prefix="embedded-worker"
            )
        future = _state["executor"].submit(_run, task, args, kwargs)
        _state["futures"].add(future)
    future.add_done_callback(_forget)
    return future


def _forget(future):
    with _lock:
        _state["futures"].discard(future)


def _run(task, args, kwargs):
    _inside.working = True
    try:
        # eager, as without the pool: the task records its own failure on its run's row
        task.apply(args=args, kwargs=kwargs, throw=True)
    except Exception:
        logger.exception("embedded task %s%r failed", task.name, tuple(args))
    finally:
        _inside.working = False
        connections.close_all()  # this thread's connections; the next task opens its own


def drain(timeout=60):
    """Wait until the pool has nothing left to run (tests); raises TimeoutError if it still has."""
    while True:
        with _lock:
            pending = set(_state["futures"])
        if not pending:
            return
        _, not_done = wait(pending, timeout=timeout)
        if not_done:
            raise TimeoutError(f"{len(not_done)} embedded task(s) still running after {timeout} s")


class EmbeddedInBackground(Task):
    """A Celery task that, in the embedded web process, runs on the background pool."""

    def apply_async(self, args=None, kwargs=None, **options):
        if active(self):
            submit(self, tuple(args or ()), dict(kwargs or {}))
            return None
        return super().apply_async(args=args, kwargs=kwargs, **options)
