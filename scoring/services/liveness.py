"""What a worker records on a run as it takes it up, so that a run outlives a worker that dies.

A task calls `*_begin` before working: it counts the start and stamps the heartbeat (see
config/runtime/heartbeat.py), and refuses work that is finished, or that has been started
RUN_MAX_ATTEMPTS times without finishing. Celery redelivers the task of a worker that died
(`reject_on_worker_lost`), so a chunk that kills its worker every time (out of memory) would
otherwise come back for ever; here its run fails instead, saying why. The watchdog
(scoring/services/watchdog.py) re-queues what no worker holds any more.
"""

import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from config.runtime.heartbeat import process_ended
from scoring.models import AdemModel, MetricChunk, MetricRun, TrainingRun

CLOSED_RUN = (MetricRun.Status.DONE, MetricRun.Status.FAILED)


def lost_worker_error(*, what, starts):
    return (
        f"{what} was started {starts} times and never finished: the worker running it stopped each time "
        "(killed, out of memory, shut down, or past the hard time limit). Start it again once the workers are "
        "healthy."
    )


def metric_chunk_begin(*, chunk, count_start=True):
    """True if the chunk is to be scored now. With `count_start` (a task a broker delivered, whose
    worker may die) the start is counted and the run's heartbeat stamped first, in a commit of
    their own; in process (the command, the embedded mode) the count is stored with the chunk's
    scores instead, sparing each chunk a commit (5-7 ms on SQLite, as long as BLEU's 2,000 pairs)."""
    run = chunk.run
    if chunk.status == MetricChunk.Status.DONE or run.status in CLOSED_RUN:
        return False
    if chunk.attempts >= settings.RUN_MAX_ATTEMPTS:
        metric_run_fail_lost(run=run, chunk=chunk)
        return False
    if count_start:
        with transaction.atomic():
            MetricChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1)
            MetricRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())
        chunk.attempts += 1
    return True


def metric_run_fail_lost(*, run, chunk):
    error = lost_worker_error(what=f"Chunk {chunk.index + 1} of {run.total_chunks}", starts=chunk.attempts)
    MetricChunk.objects.filter(pk=chunk.pk).exclude(status=MetricChunk.Status.DONE).update(
        status=MetricChunk.Status.FAILED
    )
    MetricRun.objects.filter(pk=run.pk).exclude(status__in=CLOSED_RUN).update(
        status=MetricRun.Status.FAILED, error=error, finished_at=timezone.now()
    )


def metric_run_close_if_done(*, run_id):
    """Mark the run done once every chunk is: the last chunk to finish closes its run (no chord's
    callback to lose with a worker). Returns True if this call closed it."""
    return bool(
        MetricRun.objects.filter(pk=run_id, done_chunks__gte=F("total_chunks"))
        .exclude(status__in=CLOSED_RUN)
        .update(status=MetricRun.Status.DONE, error="", finished_at=timezone.now())
    )


def training_run_begin(*, run, holder="", redelivered=False):
    """True if the ADEM run is to be (re)started now by this task; a run started too often fails instead.

    Training is not idempotent the way a chunk is: two tasks on one run would write one model. So a
    start claims the run (one conditional update on its start count) and records `holder`, the
    process it runs in (config.runtime.heartbeat.process_identity). A start that finds the run held with a
    fresh heartbeat:
    - takes it over at once when the holder's process has certainly ended: a pool process killed
      mid-training, whose message Celery redelivers within a second, as a rule to the same worker;
    - when its message was `redelivered` (its worker was lost) but the holder cannot be seen from
      here (another machine, or a run started before holders were recorded), waits until the
      holder's heartbeat either moves (it lives: this start is dropped) or grows two beats old
      (taken over), instead of leaving it to the watchdog;
    - otherwise (a duplicate message while the holder lives) is dropped.
    A heartbeat older than two beats is taken over by any start, as before.
    """
    if run.status in (TrainingRun.Status.DONE, TrainingRun.Status.FAILED):
        return False
    if run.attempts >= settings.RUN_MAX_ATTEMPTS:
        error = lost_worker_error(what=f"This {run.get_kind_display()} run", starts=run.attempts)
        training_run_fail(run=run, error=error)
        return False
    if _training_run_claim(run=run, holder=holder):
        return True
    ended = process_ended(run.worker) if run.status == TrainingRun.Status.RUNNING and run.worker else None
    if ended:
        return _training_run_claim(run=run, holder=holder, ended=run.worker)
    if redelivered and ended is None:
        return _training_run_claim_when_silent(run=run, holder=holder)
    return False


def _training_run_claim(*, run, holder, ended=None):
    """Claim the run if it is queued, its heartbeat is two beats old, or its holder is `ended`."""
    now = timezone.now()
    alive = now - timedelta(seconds=2 * settings.RUN_HEARTBEAT_SECONDS)
    free = Q(status=TrainingRun.Status.QUEUED) | Q(status=TrainingRun.Status.RUNNING) & (
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=alive)
    )
    if ended:
        free |= Q(status=TrainingRun.Status.RUNNING, worker=ended)
    claimed = TrainingRun.objects.filter(free, pk=run.pk, attempts=run.attempts).update(
        attempts=run.attempts + 1,
        status=TrainingRun.Status.RUNNING,
        heartbeat_at=now,
        worker=holder,
        progress=[],  # a restarted run starts its epochs again
        updated_at=now,
    )
    if not claimed:
        return False
    run.attempts, run.status, run.heartbeat_at, run.progress = run.attempts + 1, TrainingRun.Status.RUNNING, now, []
    run.worker = holder
    return True


def _training_run_claim_when_silent(*, run, holder):
    """Watch the holder's heartbeat: False as soon as it moves (or the run changes hands or ends),
    the claim once it is two beats old (a little more, so that the claim's own test holds)."""
    interval = settings.RUN_HEARTBEAT_SECONDS
    seen = (run.status, run.attempts, run.heartbeat_at)
    deadline = (run.heartbeat_at or timezone.now()) + timedelta(seconds=2 * interval + 0.5)
    while True:
        time.sleep(min(1.0, interval / 4))
        now_row = TrainingRun.objects.filter(pk=run.pk).values_list("status", "attempts", "heartbeat_at").first()
        if now_row != seen:
            return False
        if timezone.now() > deadline:
            return _training_run_claim(run=run, holder=holder)


def training_run_requeue(*, run, now):
    """Mark a run whose worker died as queued again; False if another watchdog or a worker got there first."""
    last = Q(heartbeat_at=run.heartbeat_at) if run.heartbeat_at else Q(heartbeat_at__isnull=True)
    return bool(
        TrainingRun.objects.filter(last, pk=run.pk, attempts=run.attempts).update(
            status=TrainingRun.Status.QUEUED, heartbeat_at=now, updated_at=now
        )
    )


def training_run_fail(*, run, error):
    TrainingRun.objects.filter(pk=run.pk).exclude(
        status__in=(TrainingRun.Status.DONE, TrainingRun.Status.FAILED)
    ).update(status=TrainingRun.Status.FAILED, error=error, updated_at=timezone.now())
    if run.adem_model_id:
        AdemModel.objects.filter(pk=run.adem_model_id).exclude(status=AdemModel.Status.READY).update(
            status=AdemModel.Status.FAILED, error=error
        )
