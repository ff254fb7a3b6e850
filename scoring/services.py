"""Writes of the scoring app: compute metric scores for a dataset, in chunks.

`metrics_compute` creates a MetricRun with its chunks and queues `tasks.compute_metrics` after
commit; every chunk task calls `metric_chunk_compute`, which scores its responses with the pure
engine (scoring.metrics) and upserts MetricScore rows. Scores carry the metric's version: a
response whose stored version differs from the registry's is recomputed, never mixed.
"""

import math

from django.db import connection, transaction
from django.db.models import Count, F
from django.utils import timezone

import scoring.metrics as engine
from annotation.models import Context, Reference, Response
from scoring import services_adem, tasks
from scoring.metrics.cider import CiderCorpus
from scoring.models import MetricChunk, MetricRun, MetricScore

DEFAULT_CHUNK_SIZE = 2000
WRITE_BATCH = 500  # rows per INSERT: 2,500 parameters, within SQLite's and PostgreSQL's limits


def metric_names(metrics=None):
    """Validated metric names, in registry order; every registered metric and every trained ADEM
    model (`adem:<name>`) when `metrics` is empty. An unknown name raises KeyError."""
    if not metrics:
        return [m.name for m in engine.all_metrics()] + services_adem.adem_metric_names()
    learned = set(services_adem.adem_metric_names())
    names = []
    for name in dict.fromkeys(metrics):
        if name.startswith(services_adem.ADEM_METRIC_PREFIX):
            if name not in learned:
                raise KeyError(f"no trained ADEM model for metric {name!r}; train one with train_adem")
            names.append(name)
        else:
            names.append(engine.get(name).name)
    return names


def metric_version(name):
    if name.startswith(services_adem.ADEM_METRIC_PREFIX):
        return services_adem.adem_metric_version(metric=name)
    return engine.get(name).version


def metrics_compute(*, dataset, metrics=None, chunk_size=DEFAULT_CHUNK_SIZE, force=False, user=None, dispatch=True):
    """Create a run for the responses whose scores are missing or stale, and queue it.

    With `force` every response is scored again. With `dispatch=False` nothing is queued: the
    caller runs the chunks (the command does, to draw its progress bar in eager mode).
    """
    names = metric_names(metrics)
    versions = {name: metric_version(name) for name in names}
    response_ids = list(Response.objects.filter(context__dataset=dataset).order_by("id").values_list("id", flat=True))
    if not force:
        response_ids = _needing_scores(dataset, response_ids, versions)
    chunk_size = max(1, int(chunk_size))
    chunks = [response_ids[i : i + chunk_size] for i in range(0, len(response_ids), chunk_size)]
    with transaction.atomic():
        run = MetricRun.objects.create(
            dataset=dataset,
            metrics=names,
            versions=versions,
            total_chunks=len(chunks),
            total_responses=len(response_ids),
            created_by=user,
            status=MetricRun.Status.QUEUED if chunks else MetricRun.Status.DONE,
            finished_at=None if chunks else timezone.now(),
        )
        MetricChunk.objects.bulk_create(MetricChunk(run=run, index=i, response_ids=ids) for i, ids in enumerate(chunks))
        if chunks and dispatch:
            transaction.on_commit(lambda: tasks.compute_metrics.delay(run.id))
    return run


def _needing_scores(dataset, response_ids, versions):
    fresh = {}
    rows = MetricScore.objects.filter(response__context__dataset=dataset, metric__in=list(versions))
    for response_id, metric, version in rows.values_list("response_id", "metric", "version").iterator(10_000):
        if versions[metric] == version:
            fresh[response_id] = fresh.get(response_id, 0) + 1
    return [rid for rid in response_ids if fresh.get(rid, 0) < len(versions)]


def metric_run_start(*, run):
    MetricRun.objects.filter(pk=run.pk, status=MetricRun.Status.QUEUED).update(status=MetricRun.Status.RUNNING)


def metric_chunk_compute(*, chunk):
    """Score one chunk and mark it done; a chunk already done is left alone. Returns rows written."""
    if chunk.status == MetricChunk.Status.DONE:
        return 0
    run = chunk.run
    MetricChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1)
    responses = _chunk_responses(run.dataset_id, chunk.response_ids)
    references = _references(run.dataset_id, [ctx for _, _, ctx in responses])
    scored = [(rid, text, references[ctx]) for rid, text, ctx in responses if references.get(ctx)]
    learned = [name for name in run.metrics if name.startswith(services_adem.ADEM_METRIC_PREFIX)]
    reference_based = [name for name in run.metrics if name not in learned]
    corpus = cider_corpus(run) if "cider" in run.metrics else None
    values = engine.score([s[1] for s in scored], [s[2] for s in scored], reference_based, corpus=corpus)
    versions = run.versions
    rows = [
        (rid, name, versions[name], _finite(values[name][position]))
        for name in reference_based
        for position, (rid, _, _) in enumerate(scored)
    ]
    # no reference: every metric is undefined; the row still records that this version ran
    unscored = {rid for rid, _, _ in responses} - {rid for rid, _, _ in scored}
    rows += [(rid, n, versions[n], None) for rid in unscored for n in reference_based]
    # learned metrics score every response (C-ADEM needs no reference)
    for name in learned:
        learned_values = services_adem.adem_metric_values(metric=name, response_ids=[rid for rid, _, _ in responses])
        rows += [(rid, name, versions[name], _finite(value)) for rid, value in learned_values.items()]
    with transaction.atomic():
        scores_upsert(rows=rows)
        marked = (
            MetricChunk.objects.filter(pk=chunk.pk)
            .exclude(status=MetricChunk.Status.DONE)
            .update(status=MetricChunk.Status.DONE, finished_at=timezone.now())
        )
        if marked:
            MetricRun.objects.filter(pk=run.pk).update(done_chunks=F("done_chunks") + 1)
    return len(rows)


def scores_upsert(*, rows):
    """Insert or update MetricScore rows given as (response_id, metric, version, value) tuples.

    The statement is the one `bulk_create(update_conflicts=True, unique_fields=["response",
    "metric"])` emits, written out because bulk_create spends ~150 us per row preparing model
    instances, five times the database's own cost. Works on SQLite (>= 3.24) and PostgreSQL.
    """
    if not rows:
        return
    meta = MetricScore._meta
    table = connection.ops.quote_name(meta.db_table)
    columns = ", ".join(
        connection.ops.quote_name(meta.get_field(f).column)
        for f in ("response", "metric", "version", "value", "computed_at")
    )
    conflict = ", ".join(connection.ops.quote_name(meta.get_field(f).column) for f in ("response", "metric"))
    updates = ", ".join(
        f"{c} = EXCLUDED.{c}"
        for c in (connection.ops.quote_name(meta.get_field(f).column) for f in ("version", "value", "computed_at"))
    )
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        for start in range(0, len(rows), WRITE_BATCH):
            batch = rows[start : start + WRITE_BATCH]
            values = ", ".join(["(%s, %s, %s, %s, %s)"] * len(batch))
            params = [p for row in batch for p in (*row, now)]
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {values} ON CONFLICT ({conflict}) DO UPDATE SET {updates}",
                params,
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
    _cider_corpora.pop(run.pk, None)
    return run


def metric_run_fail(*, run, chunk=None, error=""):
    if chunk is not None:
        MetricChunk.objects.filter(pk=chunk.pk).exclude(status=MetricChunk.Status.DONE).update(
            status=MetricChunk.Status.FAILED
        )
    MetricRun.objects.filter(pk=run.pk).update(
        status=MetricRun.Status.FAILED, error=str(error)[:2000], finished_at=timezone.now()
    )


def _chunk_responses(dataset_id, response_ids):
    # an id range and a set test: a 2,000-element IN list costs Django more than the query itself
    wanted = set(response_ids)
    rows = Response.objects.filter(
        context__dataset_id=dataset_id, id__gte=min(response_ids), id__lte=max(response_ids)
    ).values_list("id", "text", "context_id")
    return [row for row in rows if row[0] in wanted]


def _references(dataset_id, context_ids):
    """`{context_id: [reference texts in order]}` for the given contexts of a dataset."""
    refs = {}
    if not context_ids:
        return refs
    wanted = set(context_ids)
    rows = Reference.objects.filter(
        context__dataset_id=dataset_id, context_id__gte=min(wanted), context_id__lte=max(wanted)
    ).order_by("context_id", "position")
    for context_id, text in rows.values_list("context_id", "text"):
        if context_id in wanted:
            refs.setdefault(context_id, []).append(text)
    return refs


# CIDEr's document frequencies come from the whole dataset (see scoring/metrics/cider.py). Each
# worker process builds them once per run, on its first chunk of that run.
_cider_corpora = {}


def cider_corpus(run):
    if run.pk not in _cider_corpora:
        if len(_cider_corpora) >= 4:
            _cider_corpora.pop(next(iter(_cider_corpora)))
        _cider_corpora[run.pk] = dataset_cider_corpus(run.dataset)
    return _cider_corpora[run.pk]


def dataset_cider_corpus(dataset):
    """One item per response that has references: each context's references, weighted by its responses."""
    counts = dict(Context.objects.filter(dataset=dataset).annotate(n=Count("responses")).values_list("id", "n"))
    refs = _references(dataset.pk, list(counts))
    contexts = [ctx for ctx in refs if counts.get(ctx)]
    return CiderCorpus.from_refs([refs[c] for c in contexts], [counts[c] for c in contexts])


def _finite(value):
    return None if value is None or not math.isfinite(value) else float(value)
