"""Celery tasks for metrics and ADEM: thin wrappers that take ids and call a service.

`compute_metrics(run_id)` sends one `compute_metrics_chunk(run_id, chunk_id)` per unfinished
chunk; each scores its chunk (resources are loaded once per worker process by the engine's lazy
caches) and the last one to finish closes the run. Only errors that a second attempt can cure
are retried: a lost database connection, a crashed METEOR jar.

Surviving a dead worker: every task here is idempotent (a done chunk is skipped, scores are
upserted, a training run starts again from its queued row), so it is acknowledged late and
re-queued when its worker process dies (`reject_on_worker_lost`); `liveness` counts the starts
and stops a task that keeps killing its worker; a heartbeat thread shows the watchdog
(scoring/watchdog.py) that the work is alive. No chord: its callback was lost with a killed
pool process (WorkerLostError -> ChordError, a run stuck at 19/20 with no error).
"""

from celery import current_task, group, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from annotation.models import Dataset
from config.background import EmbeddedInBackground
from config.heartbeat import heartbeat, process_identity
from scoring import liveness
from scoring.metrics.meteor import ScorerCrashed
from scoring.models import Judge, MetricChunk, MetricRun, TrainingRun
from scoring.services import adem as services_adem
from scoring.services import judges_pairwise as services_judges_pairwise
from scoring.services import metric_chunks as services_metric_chunks
from scoring.services import metrics as services

RETRYABLE = (OperationalError, InterfaceError, ScorerCrashed)
# Safe to run again after a worker died mid-way: acknowledge on completion, re-queue on a lost worker.
SURVIVES_LOST_WORKER = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(base=EmbeddedInBackground, ignore_result=True, **SURVIVES_LOST_WORKER)
def compute_metrics(run_id):
    run = MetricRun.objects.filter(pk=run_id).first()
    if run is None or run.status in liveness.CLOSED_RUN:  # deleted, or closed since it was queued
        return
    services.metric_run_start(run=run)
    pending = list(run.chunks.exclude(status=MetricChunk.Status.DONE).values_list("id", flat=True))
    if not pending:
        services.metric_run_finish(run=run)
        return
    group(compute_metrics_chunk.s(run_id, chunk_id) for chunk_id in pending).apply_async()


@shared_task(bind=True, max_retries=3, default_retry_delay=10, ignore_result=True, **SURVIVES_LOST_WORKER)
def compute_metrics_chunk(self, run_id, chunk_id):
    # the run's dataset is read only by the chunk that builds the run's CIDEr corpus in this process
    chunk = MetricChunk.objects.select_related("run").filter(pk=chunk_id, run_id=run_id).first()
    delivered = not self.request.is_eager  # by a broker, to a worker that may die mid-chunk
    if chunk is None or not liveness.metric_chunk_begin(chunk=chunk, count_start=delivered):
        return 0
    # stored with the scores: the starts counted so far (this one included when delivered)
    attempt = chunk.attempts if delivered else chunk.attempts + self.request.retries + 1
    try:
        with heartbeat(MetricRun.objects.filter(pk=run_id)):
            written = services_metric_chunks.metric_chunk_compute(chunk=chunk, attempt=attempt)
    except RETRYABLE as exc:
        if self.request.retries < self.max_retries:
            if self.request.is_eager:
                # no broker to re-queue on: try again in place (a done chunk is skipped anyway)
                return self.apply(args=(run_id, chunk_id), retries=self.request.retries + 1, throw=True).get()
            raise self.retry(exc=exc) from exc
        services.metric_run_fail(run=chunk.run, chunk=chunk, error=f"chunk {chunk.index}: {exc}", attempt=attempt)
        raise
    except SoftTimeLimitExceeded:
        error = (
            f"chunk {chunk.index} ran past its time limit ({settings.CELERY_TASK_SOFT_TIME_LIMIT:g} s, the soft "
            f"limit of CELERY_TASK_TIME_LIMIT={settings.CELERY_TASK_TIME_LIMIT}): compute with a smaller chunk size "
            "or raise the limit"
        )
        services.metric_run_fail(run=chunk.run, chunk=chunk, error=error, attempt=attempt)
        raise
    except Exception as exc:
        services.metric_run_fail(run=chunk.run, chunk=chunk, error=f"chunk {chunk.index}: {exc}", attempt=attempt)
        raise
    liveness.metric_run_close_if_done(run_id=run_id)
    return written


@shared_task(ignore_result=True)
def finish_metric_run(run_id):
    """The chord callback of earlier versions; kept for messages still queued when upgrading."""
    services.metric_run_finish(run=MetricRun.objects.get(pk=run_id))


# --- ADEM: progress lives on the TrainingRun row ---------------------------------


def _training_run(run_id):
    """The run, counted as started once more; None if it is not to run (done, failed, held by a
    live task, or lost too often). A message Celery redelivered after its worker was lost takes
    over from the process that held the run once that process has ended (see liveness)."""
    run = TrainingRun.objects.select_related("dataset", "owner").filter(pk=run_id).first()
    if run is None:
        return None
    request = current_task.request if current_task else None
    redelivered = bool(((request and request.delivery_info) or {}).get("redelivered"))
    if not liveness.training_run_begin(run=run, holder=process_identity(), redelivered=redelivered):
        return None
    return run


def _training_heartbeat(run):
    return heartbeat(TrainingRun.objects.filter(pk=run.pk))


@shared_task(base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def adem_train_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    with _training_heartbeat(run):
        services_adem.adem_train_from_run(run=run)


@shared_task(base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def vhred_pretrain_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    params = run.params
    try:
        with _training_heartbeat(run):
            services_adem.vhred_pretrain(
                corpus=params.get("corpus_path"), epochs=params["epochs"], resume=params["resume"], run=run
            )
    except services_adem.AdemRefusal as error:
        TrainingRun.objects.filter(pk=run_id).update(status=TrainingRun.Status.FAILED, error=str(error))


@shared_task(base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def adem_experiment_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    params = run.params
    try:
        with _training_heartbeat(run):
            services_adem.adem_experiment(
                dataset=run.dataset,
                kind=params["experiment"],
                encoder=params["encoder"],
                # Runs queued before precision existed carry none: they were float32.
                precision=params.get("precision", "standard"),
                variant=params["variant"],
                seed=params["seed"],
                folds=params["folds"],
                run=run,
            )
    except services_adem.AdemRefusal as error:
        TrainingRun.objects.filter(pk=run_id).update(status=TrainingRun.Status.FAILED, error=str(error))


@shared_task(base=EmbeddedInBackground, ignore_result=True, **SURVIVES_LOST_WORKER)
def judge_dataset_pairs(judge_id, dataset_id):
    """Judge a dataset's human-judged pairs in both orders; the answers land in the judge cache,
    so a rerun (or a re-delivery after a lost worker) asks only for what is still missing."""
    judge = Judge.objects.filter(pk=judge_id).first()
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if judge is None or dataset is None:  # removed since it was queued
        return None
    return services_judges_pairwise.judge_dataset_pairs(judge=judge, dataset=dataset)
