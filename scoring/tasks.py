"""Celery tasks for metrics and ADEM: thin wrappers that take ids and call a service.

`compute_metrics(run_id)` fans the run's unfinished chunks out as a chord; each
`compute_metrics_chunk(run_id, chunk_id)` scores one chunk (resources are loaded once per worker
process by the engine's lazy caches) and `finish_metric_run` closes the run. Only errors that a
second attempt can cure are retried: a lost database connection, a crashed METEOR jar.
"""

from celery import chord, shared_task
from django.db import InterfaceError, OperationalError

from scoring import services, services_adem
from scoring.metrics.meteor import ScorerCrashed
from scoring.models import MetricChunk, MetricRun, TrainingRun

RETRYABLE = (OperationalError, InterfaceError, ScorerCrashed)


@shared_task(ignore_result=True)
def compute_metrics(run_id):
    run = MetricRun.objects.get(pk=run_id)
    services.metric_run_start(run=run)
    pending = list(run.chunks.exclude(status=MetricChunk.Status.DONE).values_list("id", flat=True))
    if not pending:
        services.metric_run_finish(run=run)
        return
    chord(compute_metrics_chunk.s(run_id, chunk_id) for chunk_id in pending)(finish_metric_run.si(run_id))


@shared_task(bind=True, max_retries=3, default_retry_delay=10)
def compute_metrics_chunk(self, run_id, chunk_id):
    # the run's dataset is read only by the chunk that builds the run's CIDEr corpus in this process
    chunk = MetricChunk.objects.select_related("run").get(pk=chunk_id, run_id=run_id)
    # a try that dies with its worker (killed, out of memory) is redelivered with the same count
    attempt = self.request.retries + 1
    try:
        return services.metric_chunk_compute(chunk=chunk, attempt=attempt)
    except RETRYABLE as exc:
        if self.request.retries < self.max_retries:
            if self.request.is_eager:
                # no broker to re-queue on: try again in place (a done chunk is skipped anyway)
                return self.apply(args=(run_id, chunk_id), retries=self.request.retries + 1, throw=True).get()
            raise self.retry(exc=exc) from exc
        services.metric_run_fail(run=chunk.run, chunk=chunk, error=f"chunk {chunk.index}: {exc}", attempt=attempt)
        raise
    except Exception as exc:
        services.metric_run_fail(run=chunk.run, chunk=chunk, error=f"chunk {chunk.index}: {exc}", attempt=attempt)
        raise


@shared_task(ignore_result=True)
def finish_metric_run(run_id):
    services.metric_run_finish(run=MetricRun.objects.get(pk=run_id))


# --- ADEM: progress lives on the TrainingRun row ---------------------------------


@shared_task(acks_late=True)
def adem_train_task(run_id):
    run = TrainingRun.objects.select_related("dataset", "owner").get(pk=run_id)
    services_adem.adem_train_from_run(run=run)


@shared_task(acks_late=True)
def vhred_pretrain_task(run_id):
    run = TrainingRun.objects.get(pk=run_id)
    params = run.params
    try:
        services_adem.vhred_pretrain(
            corpus=params.get("corpus_path"), epochs=params["epochs"], resume=params["resume"], run=run
        )
    except services_adem.AdemRefusal as error:
        TrainingRun.objects.filter(pk=run_id).update(status=TrainingRun.Status.FAILED, error=str(error))


@shared_task(acks_late=True)
def adem_experiment_task(run_id):
    run = TrainingRun.objects.select_related("dataset").get(pk=run_id)
    params = run.params
    try:
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
