"""Celery tasks of the metric engine: thin wrappers that take ids and call a service.

`compute_metrics(run_id)` sends one `compute_metrics_chunk(run_id, chunk_id)` per unfinished
chunk; each scores its chunk (resources are loaded once per worker process by the engine's lazy
caches) and the last one to finish closes the run. Only errors that a second attempt can cure
are retried: a lost database connection, a crashed METEOR jar. No chord: its callback was lost
with a killed pool process (WorkerLostError -> ChordError, a run stuck at 19/20 with no error).
"""

from celery import group, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from config.runtime.background import EmbeddedInBackground
from config.runtime.heartbeat import heartbeat
from scoring.metrics.meteor import ScorerCrashed
from scoring.models import MetricChunk, MetricRun
from scoring.services import liveness
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from scoring.tasks.options import SURVIVES_LOST_WORKER

RETRYABLE = (OperationalError, InterfaceError, ScorerCrashed)


@shared_task(
    name="scoring.tasks.compute_metrics", base=EmbeddedInBackground, ignore_result=True, **SURVIVES_LOST_WORKER
)
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


@shared_task(
    name="scoring.tasks.compute_metrics_chunk",
    bind=True,
    max_retries=3,
    default_retry_delay=10,
    ignore_result=True,
    **SURVIVES_LOST_WORKER,
)
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


@shared_task(name="scoring.tasks.finish_metric_run", ignore_result=True)
def finish_metric_run(run_id):
    """The chord callback of earlier versions; kept for messages still queued when upgrading."""
    services.metric_run_finish(run=MetricRun.objects.get(pk=run_id))
