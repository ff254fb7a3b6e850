"""The Celery app. Eager (in-process) unless CELERY_BROKER_URL names a broker.

Periodic tasks (`celery -A config beat`, or a worker started with `-B`): expiring abandoned
assignment slots, syncing live MTurk surveys, and the runs' watchdog (scoring/tasks/watchdog.py,
analysis/tasks/recovery.py) every RUN_WATCHDOG_SECONDS.
"""

import gc
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready
from django.conf import settings  # lazy: read when the app is finalized

from config.runtime import warmup

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ratelab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect  # each process of a prefork pool, before its first task
def _warm_up_pool_process(**kwargs):
    warmup.warm(warmup.WORKER)  # the libraries the tasks compute with (config/runtime/warmup.py)
    warmup.warm_models_in_background()  # and the metric models, on a thread: the first run does not wait


@worker_ready.connect  # the worker itself, which runs the tasks with --pool solo or threads
def _warm_up_worker(sender=None, **kwargs):
    if type(sender.pool).__module__ != "celery.concurrency.prefork":  # prefork: its children warm up
        warmup.warm(warmup.WORKER)
        warmup.warm_models_in_background()


# connected after the warm-ups, so runs after them: what they imported is frozen too
@worker_process_init.connect  # each process of a prefork pool, once it has started
@worker_ready.connect  # the worker itself: the process that runs the tasks with --pool solo or threads
def _freeze_startup_objects(**kwargs):
    """Leave the objects a worker process holds once started out of Python's full collections.

    A full collection walks every object of the process: with Django, pandas and torch loaded about
    a million objects, 0.1-0.3 s, and the rows a metric chunk reads set one off every few chunks.
    The objects that exist at start-up live as long as the process, so walking them finds nothing;
    frozen, they are skipped (and forked children do not copy the pages the walk would write to).
    `compute_metrics` does the same for the length of a run.
    """
    gc.freeze()


@app.on_after_finalize.connect
def _expire_assignments_schedule(sender, **kwargs):
    # Abandoned assignment slots go back to the pool (the `expire_assignments` command does the same).
    sender.add_periodic_task(
        300.0, sender.signature("annotation.expire_assignments"), name="annotation-expire-assignments"
    )


# The providers' tasks live beside their provider (annotation/crowd/mturk/tasks.py,
# annotation/crowd/prolific/tasks.py); `annotation.services.tasks` holds the HIT pages a launch renders and
# the expiry of abandoned assignments (shared machinery beside the services it wraps).
app.autodiscover_tasks(["annotation.crowd.mturk", "annotation.crowd.prolific", "annotation.services"])
# Beat syncs live MTurk surveys; Prolific submissions are reconciled by webhook, and by this poll as the fallback.
app.conf.beat_schedule["mturk-sync-live-surveys"] = {
    "task": "annotation.tasks_mturk.sync_live_surveys",
    "schedule": 300.0,
}
app.conf.beat_schedule["prolific-sync-live-surveys"] = {
    "task": "annotation.tasks_prolific.prolific_sync_live_surveys",
    "schedule": 300.0,
}
# Tasks that live below an app package (annotation/quality/tasks.py).
app.autodiscover_tasks(["annotation.quality"])
# The runs' watchdog: re-queues, closes or fails runs whose worker died (`manage.py recover_runs`
# does the same once, for deployments without beat). Both apps' are in their `tasks` package
# (scoring/tasks/watchdog.py, analysis/tasks/recovery.py), found by the first autodiscovery above.


@app.on_after_finalize.connect
def _watchdog_schedule(sender, **kwargs):
    every = float(settings.RUN_WATCHDOG_SECONDS)
    # a check still queued when the next is due is dropped (workers down: no pile of checks at restart)
    for app_label in ("scoring", "analysis"):
        check = sender.signature(f"{app_label}.recover_runs", options={"expires": every})
        sender.add_periodic_task(every, check, name=f"{app_label}-recover-runs")
