"""Writes of the scoring app: compute metric scores for a dataset, in chunks.

`metrics_compute` creates a MetricRun with its chunks and queues the `compute_metrics` task (by
name: scoring.tasks imports this module, DESIGN.md) after commit; every chunk task calls
`metric_chunk_compute` (scoring.services.metrics.chunks), which scores its responses with the pure
engine (scoring.metrics) and upserts MetricScore rows (scoring.services.metrics.scores). Scores
carry the metric's version: a response whose stored version differs from the registry's is
recomputed, never mixed. This module validates the metric names, creates, starts and closes runs.
"""

from celery import current_app
from django.db import transaction
from django.utils import timezone

import scoring.metrics as engine
from annotation.models import Dataset, Response
from scoring.models import AdemModel, Judge, MetricChunk, MetricRun, MetricScore
from scoring.services.adem import scoring as services_adem_scoring
from scoring.services.judges import judging as services_judges
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import signatures as services_signatures

# Queued by name: scoring.tasks imports this module, so this module does not import it (no cycle).
# ScoringConfig.ready() imports scoring.tasks, so every process that loads the apps knows the name.
COMPUTE_METRICS_TASK = "scoring.tasks.compute_metrics"
DEFAULT_CHUNK_SIZE = 2000


def metric_names(metrics=None, *, owner=None):
    """Validated metric names, in registry order; every registered metric and every trained ADEM
    model of `owner` (`adem:<name>`; the dataset's owner) when `metrics` is empty. An unknown name
    raises KeyError. LLM judges (`judge:<name>`) cost requests: they run only when named."""
    if not metrics:
        return [m.name for m in engine.all_metrics()] + services_adem_scoring.adem_metric_names(owner=owner)
    learned = None  # the trained models, looked up only when an ADEM metric is named
    names = []
    for name in dict.fromkeys(metrics):
        if services_adem_scoring.is_model_metric(name):
            if learned is None:
                learned = set(services_adem_scoring.adem_metric_names(owner=owner))
            if name not in learned:
                raise KeyError(f"no trained ADEM model for metric {name!r}; train one with train_adem")
            names.append(name)
        elif name.startswith(services_judges.JUDGE_METRIC_PREFIX):
            services_judges.judge_metric_check(name, owner=owner)
            names.append(name)
        else:
            names.append(engine.get(name).name)
    return names


def metric_version(name, *, owner=None):
    if services_adem_scoring.is_model_metric(name):
        return services_adem_scoring.adem_metric_version(metric=name, owner=owner)
    if name.startswith(services_judges.JUDGE_METRIC_PREFIX):
        return services_judges.judge_metric_version(metric=name, owner=owner)
    return engine.get(name).version


class MetricsUpToDate(Exception):
    """Nothing to compute: every named metric's score of every response has the current version."""

    def __init__(self, names):
        self.names = names
        count = len(names)
        super().__init__(f"All {count} metric{'s are' if count != 1 else ' is'} up to date: nothing to compute.")


class MetricsRunning(Exception):
    """The dataset already has a run queued or in progress: a second press of Compute (another tab,
    a resubmitted form) would score the same responses twice, and pay a judge's requests twice."""

    def __init__(self, run):
        self.run = run
        super().__init__(
            f"A run is already {run.status} on this dataset (run {run.pk}, {run.done_chunks}/{run.total_chunks} "
            "chunks): nothing new was started. Compute again when it ends."
        )


def metrics_compute(
    *,
    dataset,
    metrics=None,
    chunk_size=DEFAULT_CHUNK_SIZE,
    force=False,
    user=None,
    dispatch=True,
    refuse_if_up_to_date=False,
    refuse_if_running=False,
):
    """Create a run of the metrics whose scores are missing or stale, for the responses that lack
    one of them (see `_needing_scores`), and queue it: the run's `metrics`, `versions` and
    `signatures` name only what it computes, so the other metrics' rows and signatures stay as the
    runs that computed them left them.

    With `force` every named metric of every response is scored again. With `dispatch=False` nothing is queued: the
    caller runs the chunks (the command does, to draw its progress bar in eager mode). With
    `refuse_if_up_to_date` a request with nothing to do raises MetricsUpToDate and creates no run
    (the page says so rather than show an empty run). With `refuse_if_running` a dataset that has a
    run queued or in progress raises MetricsRunning and nothing is created (the page's button: two
    presses must not start two runs).
    """
    requested = metric_names(metrics, owner=dataset.owner_id)
    versions = {name: metric_version(name, owner=dataset.owner_id) for name in requested}
    response_ids = _dataset_response_ids(dataset)
    names = requested
    if not force:
        names, response_ids = _needing_scores(dataset, response_ids, versions)
        versions = {name: versions[name] for name in names}
    if refuse_if_up_to_date and not response_ids:
        raise MetricsUpToDate(requested)
    chunk_size = max(1, int(chunk_size))
    chunks = [response_ids[i : i + chunk_size] for i in range(0, len(response_ids), chunk_size)]
    with transaction.atomic():
        if refuse_if_running:
            _refuse_if_running(dataset)
        _lock_named_models(names, owner=dataset.owner_id)
        run = MetricRun.objects.create(
            dataset=dataset,
            metrics=names,
            versions=versions,
            signatures={name: services_signatures.metric_signature(name, owner=dataset.owner_id) for name in names},
            total_chunks=len(chunks),
            total_responses=len(response_ids),
            created_by=user,
            status=MetricRun.Status.QUEUED if chunks else MetricRun.Status.DONE,
            finished_at=None if chunks else timezone.now(),
        )
        MetricChunk.objects.bulk_create(MetricChunk(run=run, index=i, response_ids=ids) for i, ids in enumerate(chunks))
        if chunks and dispatch:
            transaction.on_commit(lambda: current_app.tasks[COMPUTE_METRICS_TASK].delay(run.id))
    return run


def _refuse_if_running(dataset):
    # The dataset's row is locked until this transaction commits (PostgreSQL), so of two presses at
    # the same moment the second waits for the first's run and then sees it.
    Dataset.objects.select_for_update().filter(pk=dataset.pk).exists()
    open_run = (
        MetricRun.objects.filter(dataset=dataset, status__in=(MetricRun.Status.QUEUED, MetricRun.Status.RUNNING))
        .order_by("-pk")
        .first()
    )
    if open_run is not None:
        raise MetricsRunning(open_run)


def _lock_named_models(names, *, owner):
    """Lock (PostgreSQL, until the run commits) the owner's judges and ADEM models that `names`
    name, then check again that each is still there (KeyError, as for an unknown metric).

    Removing a judge or deleting a model takes the same row lock before it looks for a run using
    it, so the two take turns: a removal that locked first commits, and this finds the row gone;
    a run that locked first commits, and the removal then finds it and refuses. Without the lock
    a run created between the removal's check and its commit would name a metric nobody can
    compute. Rows are locked judges first, then models, each by id, so two runs naming the same
    ones take them in the same order and never wait on each other in a circle."""
    named = []
    for table, prefix in (
        (Judge, services_judges.JUDGE_METRIC_PREFIX),
        (AdemModel, services_adem_scoring.ADEM_METRIC_PREFIX),
        (AdemModel, services_adem_scoring.LEARNED_METRIC_PREFIX),
    ):
        wanted = [name.removeprefix(prefix) for name in names if name.startswith(prefix)]
        if wanted:
            locked = table.objects.select_for_update().filter(owner=owner, name__in=wanted).order_by("pk")
            list(locked.values_list("pk"))
            named += [prefix + name for name in wanted]
    if named:
        # Read again after the lock (a new snapshot on PostgreSQL): a row removed meanwhile is
        # refused with the message an unknown name gets.
        metric_names(named, owner=owner)


def _dataset_response_ids(dataset):
    """The ids of the dataset's responses, ascending. Sorted here rather than by the database: its
    rows come context by context, so nearly in id order already, which Python's sort merely checks
    (SQLite's ORDER BY built a temporary B-tree of them: 10,000 ids, 4.6 ms against 4.1)."""
    ids = Response.objects.filter(context__dataset=dataset).order_by().values_list("id")
    return sorted(rid for (rid,) in services_metric_chunks.fetch_plain(ids))


def _needing_scores(dataset, response_ids, versions):
    """`(metrics, response ids)`: the metrics of `versions` that some response lacks in that
    version (missing, or computed by another), in their order, and the responses that lack at
    least one of them. One pass over the dataset's score rows of those metrics.

    A run scores only these: after one new ADEM model or judge, or one metric's new version, it
    computes that metric alone (not METEOR, BERTScore and the rest again). A response it holds is
    scored for each of its metrics, even one it has in the current version: a judge answers that
    from its cache, and the others write the value they wrote before.
    """
    fresh = {name: set() for name in versions}
    rows = MetricScore.objects.filter(response__context__dataset=dataset, metric__in=list(versions))
    for response_id, metric, version in rows.values_list("response_id", "metric", "version").iterator(10_000):
        if versions[metric] == version:
            fresh[metric].add(response_id)
    everyone = set(response_ids)
    lacking = {name: everyone - fresh[name] for name in versions}
    names = [name for name in versions if lacking[name]]
    needing = set().union(*(lacking[name] for name in names))
    return names, [rid for rid in response_ids if rid in needing]


def metric_run_prepare(*, run):
    """Load in this process what every chunk of the run shares (CIDEr's document frequencies), so
    that processes forked from it start with it rather than each building its own."""
    if "cider" in run.metrics:
        services_metric_chunks.cider_corpus(run)


def metric_run_start(*, run):
    MetricRun.objects.filter(pk=run.pk, status=MetricRun.Status.QUEUED).update(
        status=MetricRun.Status.RUNNING, heartbeat_at=timezone.now()
    )


def metric_run_finish(*, run):
    """Close a run once its chunks are done (the chord's callback, or the command)."""
    run.refresh_from_db()
    if run.status == MetricRun.Status.FAILED:
        return run
    pending = run.chunks.exclude(status=MetricChunk.Status.DONE).count()
    run.status = MetricRun.Status.DONE if pending == 0 else MetricRun.Status.FAILED
    run.error = "" if pending == 0 else f"{pending} chunk(s) did not finish"
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "error", "finished_at"])
    services_metric_chunks.cider_corpus_forget(run=run)
    return run


def metric_run_fail(*, run, chunk=None, error="", attempt=1):
    if chunk is not None:
        MetricChunk.objects.filter(pk=chunk.pk).exclude(status=MetricChunk.Status.DONE).update(
            status=MetricChunk.Status.FAILED, attempts=attempt
        )
    MetricRun.objects.filter(pk=run.pk).update(
        status=MetricRun.Status.FAILED, error=str(error)[:2000], finished_at=timezone.now()
    )
