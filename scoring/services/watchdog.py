"""Find metric runs and ADEM runs that no worker is working on any more, and re-queue, close or fail them.

Run every RUN_WATCHDOG_SECONDS by Celery beat (`scoring.recover_runs`, see config/celery.py) and by
`manage.py recover_runs` where no beat runs (a cron job; the embedded mode). A run is stalled when
its heartbeat (config/runtime/heartbeat.py: stamped at its start, at each finished chunk and every
RUN_HEARTBEAT_SECONDS while a task works on it) is older than RUN_STALL_SECONDS: every task that
held it has stopped. Then:
- a metric run whose chunks are all stored is closed as done (its last chunk's worker died
  between storing and closing);
- a run whose work has been started RUN_MAX_ATTEMPTS times fails, with an error that says so;
- any other is queued again: the chunks not yet done (a done chunk is never scored again), or the
  training from its start. Duplicates of messages still in the broker are harmless: each start
  first checks what is already done.
A run still waiting behind other work in the queue also looks stalled; re-queueing it only adds
a message that finds its chunks done, and it never fails for that (only starts count).
"""

import logging
from datetime import timedelta

from celery import current_app
from django.conf import settings
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from scoring.models import MetricChunk, MetricRun, TrainingRun
from scoring.services import liveness
from scoring.services.adem.jobs import ADEM_EXPERIMENT_TASK, ADEM_TRAIN_TASK, VHRED_PRETRAIN_TASK
from scoring.services.learned.jobs import LEARNED_TRAIN_TASK
from scoring.services.metrics.compute import COMPUTE_METRICS_TASK

logger = logging.getLogger("scoring.watchdog")  # its name before the move: log settings filter by it

# Queued by name, as the services queue them: the tasks import this module, not the reverse.
TRAINING_TASKS = {
    TrainingRun.Kind.TRAIN: ADEM_TRAIN_TASK,
    TrainingRun.Kind.PRETRAIN: VHRED_PRETRAIN_TASK,
    TrainingRun.Kind.EXPERIMENT: ADEM_EXPERIMENT_TASK,
    TrainingRun.Kind.TRAIN_LEARNED: LEARNED_TRAIN_TASK,
}


def stall_cutoff(now=None):
    return (now or timezone.now()) - timedelta(seconds=settings.RUN_STALL_SECONDS)


def _stalled(model, open_statuses, now):
    """Rows of `model` in one of `open_statuses` whose last sign of life is older than the cutoff."""
    return (
        model.objects.filter(status__in=open_statuses)
        .annotate(last_sign=Coalesce("heartbeat_at", "created_at"))
        .filter(last_sign__lt=stall_cutoff(now))
    )


def metric_runs_recover(*, now=None):
    """Re-queue, close or fail stalled metric runs. Returns {"requeued": [...], "finished": [...], "failed": [...]}."""
    now = now or timezone.now()
    outcome = {"requeued": [], "finished": [], "failed": []}
    for run in _stalled(MetricRun, (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING), now):
        pending = run.chunks.exclude(status=MetricChunk.Status.DONE).order_by("index")
        worn = pending.filter(attempts__gte=settings.RUN_MAX_ATTEMPTS).first()
        if not pending.exists():
            if liveness.metric_run_close_if_done(run_id=run.pk):
                outcome["finished"].append(run.pk)
        elif worn is not None:
            liveness.metric_run_fail_lost(run=run, chunk=worn)
            outcome["failed"].append(run.pk)
        elif _claim(MetricRun, run, now):
            current_app.tasks[COMPUTE_METRICS_TASK].delay(run.pk)
            outcome["requeued"].append(run.pk)
    _log("metric run", outcome)
    return outcome


def training_runs_recover(*, now=None):
    """Re-queue or fail stalled ADEM training, pre-training and experiment runs (same answer shape)."""
    now = now or timezone.now()
    outcome = {"requeued": [], "finished": [], "failed": []}
    for run in _stalled(TrainingRun, (TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING), now):
        if run.attempts >= settings.RUN_MAX_ATTEMPTS:
            error = liveness.lost_worker_error(what=f"This {run.get_kind_display()} run", starts=run.attempts)
            liveness.training_run_fail(run=run, error=error)
            outcome["failed"].append(run.pk)
        elif liveness.training_run_requeue(run=run, now=now):
            current_app.tasks[TRAINING_TASKS[run.kind]].delay(run.pk)
            outcome["requeued"].append(run.pk)
    _log("ADEM run", outcome)
    return outcome


def _claim(model, run, now):
    """Stamp the heartbeat before re-queueing, so that the run is not re-queued again before
    another RUN_STALL_SECONDS pass; False if another watchdog got there first."""
    last = Q(heartbeat_at=run.heartbeat_at) if run.heartbeat_at else Q(heartbeat_at__isnull=True)
    return bool(model.objects.filter(last, pk=run.pk).update(heartbeat_at=now))


def _log(what, outcome):
    for action, ids in outcome.items():
        if ids:
            logger.warning("watchdog: %s %s %s", what, action, ", ".join(map(str, ids)))
