"""Writes of the scoring app: compute metric scores for a dataset, in chunks.

`metrics_compute` creates a MetricRun with its chunks and queues the `compute_metrics` task (by
name: scoring.tasks imports this module, DESIGN.md) after commit; every chunk task calls
`metric_chunk_compute`, which scores its responses with the pure engine (scoring.metrics) and
upserts MetricScore rows. Scores carry the metric's version: a response whose stored version
differs from the registry's is recomputed, never mixed.
"""

import contextlib
import functools
import math
import sqlite3
import threading

from celery import current_app
from django.db import connection, transaction
from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX
from django.db.models import Count, F, Q
from django.utils import timezone

import scoring.metrics as engine
from annotation.models import Context, Dataset, Reference, Response
from scoring.metrics.cider import CiderCorpus
from scoring.models import AdemModel, Judge, MetricChunk, MetricRun, MetricScore
from scoring.services import adem as services_adem
from scoring.services import judges as services_judges
from scoring.services import signatures as services_signatures

# Queued by name: scoring.tasks imports this module, so this module does not import it (no cycle).
# ScoringConfig.ready() imports scoring.tasks, so every process that loads the apps knows the name.
COMPUTE_METRICS_TASK = "scoring.tasks.compute_metrics"
DEFAULT_CHUNK_SIZE = 2000
WRITE_BATCH = 2000  # rows per INSERT on PostgreSQL
SQLITE_WRITE_BATCH = 200  # rows per INSERT on SQLite (see _upsert_sqlite)


def metric_names(metrics=None, *, owner=None):
    """Validated metric names, in registry order; every registered metric and every trained ADEM
    model of `owner` (`adem:<name>`; the dataset's owner) when `metrics` is empty. An unknown name
    raises KeyError. LLM judges (`judge:<name>`) cost requests: they run only when named."""
    if not metrics:
        return [m.name for m in engine.all_metrics()] + services_adem.adem_metric_names(owner=owner)
    learned = None  # the trained models, looked up only when an ADEM metric is named
    names = []
    for name in dict.fromkeys(metrics):
        if name.startswith(services_adem.ADEM_METRIC_PREFIX):
            if learned is None:
                learned = set(services_adem.adem_metric_names(owner=owner))
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
    if name.startswith(services_adem.ADEM_METRIC_PREFIX):
        return services_adem.adem_metric_version(metric=name, owner=owner)
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
    for table, prefix in ((Judge, services_judges.JUDGE_METRIC_PREFIX), (AdemModel, services_adem.ADEM_METRIC_PREFIX)):
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
    return sorted(rid for (rid,) in _fetch_plain(ids))


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
        cider_corpus(run)


def metric_run_start(*, run):
    MetricRun.objects.filter(pk=run.pk, status=MetricRun.Status.QUEUED).update(
        status=MetricRun.Status.RUNNING, heartbeat_at=timezone.now()
    )


# A process scores one chunk at a time, but may write one while it scores the next: the command
# runs its chunk tasks in two threads (see compute_metrics), as a Celery worker with a thread pool
# would. SQLite and psycopg release the GIL while a statement or a commit runs, so the write of one
# chunk costs the scoring of the next little; two chunks scored at once would only take turns on
# the GIL. On SQLite a process also writes one chunk at a time: two written at once would wait on
# its write lock in the sleeps of its busy handler (1, 2, 5, 10 ms...). PostgreSQL writes them side
# by side, each in its own server process (BLEU-1..4 of 10,000 responses in two threads: 0.45 s
# with one write at a time, 0.34 s with two): its rows, not the database, are locked.
_scoring_turn = threading.Lock()
_sqlite_writing_turn = threading.Lock()


def metric_chunk_compute(*, chunk, attempt=1):
    """Score one chunk and mark it done; a chunk already done is left alone. Returns rows written.

    `attempt` (1 for the first try, 2 for the first retry...) is stored with the result rather than
    counted in a transaction of its own before the work: on SQLite every commit costs 5-7 ms here
    (its pages written to the log, then an fsync), and a chunk's one necessary commit is its scores'.
    """
    if chunk.status == MetricChunk.Status.DONE:
        return 0
    run = chunk.run
    with _scoring_turn:
        response_ids, scores = _chunk_scores(run, chunk.response_ids)
    with _writing_turn(), transaction.atomic():
        written = scores_upsert(response_ids=response_ids, scores=scores, versions=run.versions)
        marked = (
            MetricChunk.objects.filter(pk=chunk.pk)
            .exclude(status=MetricChunk.Status.DONE)
            .update(status=MetricChunk.Status.DONE, finished_at=timezone.now(), attempts=attempt)
        )
        if marked:
            MetricRun.objects.filter(pk=run.pk).update(done_chunks=F("done_chunks") + 1, heartbeat_at=timezone.now())
    return written


def _writing_turn():
    return _sqlite_writing_turn if connection.vendor == "sqlite" else contextlib.nullcontext()


def _chunk_scores(run, chunk_response_ids):
    """`(response ids, {metric: values in their order})` of a chunk: read and scored, nothing written."""
    responses = _chunk_responses(chunk_response_ids)
    scored = [row for row in responses if row[2]]
    learned = [name for name in run.metrics if name.startswith(_LEARNED_PREFIXES)]
    reference_based = [name for name in run.metrics if name not in learned]
    corpus = cider_corpus(run) if "cider" in run.metrics else None
    values = engine.score([s[1] for s in scored], [s[2] for s in scored], reference_based, corpus=corpus)
    response_ids = [rid for rid, _, _ in responses]
    scores = {}
    if len(scored) == len(responses):
        scores.update((name, _finite_all(values[name])) for name in reference_based)
    else:  # no reference: every metric is undefined; the row still records that this version ran
        positions = {rid: position for position, (rid, _, _) in enumerate(scored)}
        for name in reference_based:
            found = _finite_all(values[name])
            scores[name] = [found[positions[rid]] if rid in positions else None for rid in response_ids]
    # learned metrics score every response (C-ADEM needs no reference)
    for name in learned:
        learned_values = _learned_values(run, name, response_ids)
        scores[name] = [_finite(learned_values.get(rid)) for rid in response_ids]
    return response_ids, scores


_LEARNED_PREFIXES = (services_adem.ADEM_METRIC_PREFIX, services_judges.JUDGE_METRIC_PREFIX)


def _learned_values(run, name, response_ids):
    owner = run.dataset.owner_id
    if name.startswith(services_judges.JUDGE_METRIC_PREFIX):
        return services_judges.judge_metric_values(metric=name, response_ids=response_ids, owner=owner, run=run)
    return services_adem.adem_metric_values(metric=name, response_ids=response_ids, owner=owner)


def scores_upsert(*, response_ids, scores, versions):
    """Insert or update the MetricScore rows of every response and metric; returns their number.

    `scores` is `{metric: values in the order of response_ids}` (None where undefined), `versions`
    `{metric: version}`. The statement is the one `bulk_create(update_conflicts=True,
    unique_fields=["response", "metric"])` emits, written out because bulk_create spends ~150 us
    per row preparing model instances, five times the database's own cost. Rows go response by
    response (the unique index's order, so its pages fill in sequence). SQLite (>= 3.24) and
    PostgreSQL, the two databases the settings accept.
    """
    metrics = list(scores)
    n_rows = len(response_ids) * len(metrics)
    if not n_rows:
        return 0
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    if connection.vendor == "sqlite":
        _upsert_sqlite(response_ids, scores, versions, now)
    else:
        _upsert_postgresql(response_ids, scores, versions, now)
    return n_rows


def _upsert_sqlite(response_ids, scores, versions, now):
    """SQLite: each statement binds every metric's name and version and the time once (numbered
    parameters, `?3`), then per response its id and its values: 1 + M parameters per response
    instead of 5 M. Binding holds the GIL, while SQLite's own work does not: with fewer bindings a
    chunk's write takes less of the time the thread scoring the next chunk needs (see
    `_scoring_turn`); writing BLEU-1..4 for 10,000 responses in one thread went from ~110 to
    ~70 ms. The driver's connection, in Django's transaction, takes the statement as it is
    (Django's cursor rewrites %s with a regular expression on every call, which on statements this
    long costs half as much as SQLite's own work).

    At most SQLITE_WRITE_BATCH rows a statement: SQLite's time to prepare a statement with numbered
    parameters grows with the square of its length (200 rows: 0.3 ms, 1,000: 6 ms, 4,000: 70 ms),
    and a statement is prepared again on every connection that runs it: on each thread's and each
    process's of the command, on a Celery worker's for every task (CONN_MAX_AGE 0 closes it after
    each). Run again on one connection, 200 rows a statement cost 0.2 ms a chunk more than 1,000.
    """
    metrics = list(scores)
    width = len(metrics) + 1
    head = [value for name in metrics for value in (name, versions[name])] + [now]
    params = [None] * (len(response_ids) * width)
    params[0::width] = response_ids
    for offset, name in enumerate(metrics, 1):
        params[offset::width] = scores[name]
    connection.ensure_connection()
    limit = connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    per_statement = max(1, min(SQLITE_WRITE_BATCH // len(metrics), (limit - len(head)) // width))
    execute = connection.connection.execute
    for start in range(0, len(response_ids), per_statement):
        count = min(per_statement, len(response_ids) - start)
        statement = _sqlite_upsert_statement(len(metrics), count)
        execute(statement, head + params[start * width : (start + count) * width])


@functools.lru_cache(maxsize=32)
def _sqlite_upsert_statement(n_metrics, n_responses):
    """The SQLite statement for `n_responses` responses of `n_metrics` metrics: parameters 1..2M
    are the metrics' names and versions, 2M + 1 the time, then each response's id and values."""
    now = 2 * n_metrics + 1
    rows = []
    for response in range(n_responses):
        first = now + 1 + response * (n_metrics + 1)
        rows.extend(f"(?{first}, ?{2 * m + 1}, ?{2 * m + 2}, ?{first + 1 + m}, ?{now})" for m in range(n_metrics))
    return _upsert_statement().format(rows=f"VALUES {', '.join(rows)}")


def _upsert_postgresql(response_ids, scores, versions, now):
    """PostgreSQL: the rows as arrays, unnested by the server: per statement one array of response
    ids, one of metric numbers (indexes into the arrays of names and versions, bound once) and one
    of values, each passed as one text literal (`{1,2,3}`) that PostgreSQL's array input reads in
    C. A VALUES list of five parameters a row cost three times as much (2,000 rows: 27 ms against
    9): psycopg2 quotes each parameter into the statement, which the server then parses and plans
    row by row. Floats go as `repr`, which PostgreSQL reads back to the same double.
    """
    metrics = list(scores)
    values = [None] * (len(response_ids) * len(metrics))
    for offset, name in enumerate(metrics):
        values[offset :: len(metrics)] = scores[name]
    numbers = ",".join(str(k) for k in range(1, len(metrics) + 1))
    names, metric_versions = metrics, [versions[name] for name in metrics]
    per_statement = max(1, WRITE_BATCH // len(metrics))
    with connection.cursor() as cursor:
        for start in range(0, len(response_ids), per_statement):
            ids = response_ids[start : start + per_statement]
            batch = values[start * len(metrics) : (start + len(ids)) * len(metrics)]
            cursor.execute(
                _postgresql_upsert_statement(),
                [
                    names,
                    metric_versions,
                    now,
                    _array_literal([str(rid) for rid in ids for _ in metrics]),
                    _array_literal([numbers] * len(ids)),
                    _array_literal(["NULL" if v is None else repr(float(v)) for v in batch]),
                ],
            )


def _array_literal(items):
    return "{" + ",".join(items) + "}"


@functools.cache
def _postgresql_upsert_statement():
    return _upsert_statement().format(
        rows=(
            "SELECT u.response, (%s::varchar[])[u.metric], (%s::varchar[])[u.metric], u.value, %s"
            " FROM unnest(%s::bigint[], %s::integer[], %s::double precision[]) AS u(response, metric, value)"
        )
    )


def _upsert_statement():
    meta = MetricScore._meta
    quote = connection.ops.quote_name

    def columns(*fields):
        return [quote(meta.get_field(f).column) for f in fields]

    inserted = ", ".join(columns("response", "metric", "version", "value", "computed_at"))
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns("version", "value", "computed_at"))
    return (
        f"INSERT INTO {quote(meta.db_table)} ({inserted}) {{rows}}"
        f" ON CONFLICT ({', '.join(columns('response', 'metric'))}) DO UPDATE SET {updates}"
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
    _cider_corpora.pop((run.pk, run.created_at), None)
    return run


def metric_run_fail(*, run, chunk=None, error="", attempt=1):
    if chunk is not None:
        MetricChunk.objects.filter(pk=chunk.pk).exclude(status=MetricChunk.Status.DONE).update(
            status=MetricChunk.Status.FAILED, attempts=attempt
        )
    MetricRun.objects.filter(pk=run.pk).update(
        status=MetricRun.Status.FAILED, error=str(error)[:2000], finished_at=timezone.now()
    )


def _chunk_responses(response_ids):
    """`[(id, text, [reference texts in order])]` of a chunk's responses, in id order.

    One query joining each response to its context's references (a response with none comes back
    once with None), selected by id range and a set test: a 2,000-element IN list costs Django
    more than the query itself. The run took the ids from its dataset, so no join on the dataset
    (SQLite plans that as a walk over every context of the dataset for each chunk, which made a
    run quadratic in the dataset's size), nor on the context: the reference's context id is the
    response's. One query rather than responses, then references: the second query's set-up and a
    dictionary of contexts cost a fifth of the chunk's reading. Written as SQL, once: compiling
    the queryset cost each chunk a millisecond, and Django's cursor another rewriting %s.
    """
    wanted = set(response_ids)
    responses = []
    last = None
    for response_id, text, reference in _fetch_sql(_chunk_query(), [min(wanted), max(wanted)]):
        if response_id == last:  # the response's next reference
            responses[-1][2].append(reference)
        elif response_id in wanted:
            responses.append((response_id, text, [] if reference is None else [reference]))
            last = response_id
    return responses


@functools.cache
def _chunk_query():
    quote = connection.ops.quote_name
    response, reference = Response._meta, Reference._meta

    def column(meta, name):
        return quote(meta.get_field(name).column)

    response_id, context_id = column(response, "id"), column(response, "context")
    return (
        f"SELECT r.{response_id}, r.{column(response, 'text')}, f.{column(reference, 'text')}"
        f" FROM {quote(response.db_table)} r LEFT OUTER JOIN {quote(reference.db_table)} f"
        f" ON f.{column(reference, 'context')} = r.{context_id}"
        f" WHERE r.{response_id} >= %s AND r.{response_id} <= %s"
        f" ORDER BY r.{response_id}, f.{column(reference, 'position')}"
    )


def _references(context_ids):
    """`{context_id: [reference texts in order]}` for the given contexts (all of one dataset).

    A range of context ids and a set test rather than a join on the dataset (the contexts come from
    it already; see `_chunk_responses`).
    """
    refs = {}
    if not context_ids:
        return refs
    wanted = set(context_ids)
    rows = Reference.objects.filter(context_id__gte=min(wanted), context_id__lte=max(wanted)).order_by(
        "context_id", "position"
    )
    for context_id, text in _fetch_plain(rows.values_list("context_id", "text")):
        if context_id in wanted:
            refs.setdefault(context_id, []).append(text)
    return refs


def _fetch_plain(rows):
    """The tuples of a values_list of integer and text columns, fetched without Django's per-row
    iteration (a third of a chunk's reading time); such columns need no value conversion."""
    return _fetch_sql(*rows.query.sql_with_params())


def _fetch_sql(sql, params):
    """All rows of a query written with %s placeholders; columns come as the driver gives them.
    On SQLite through the driver's own connection (with ?), which Django's cursor would reach
    after rewriting the placeholders with a regular expression."""
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        return connection.connection.execute(_sqlite_placeholders(sql), params).fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


@functools.lru_cache(maxsize=64)
def _sqlite_placeholders(sql):
    """%s as ? and %% as %, as Django's SQLite cursor rewrites them."""
    return FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%")


# CIDEr's document frequencies come from the whole dataset (see scoring/metrics/cider.py). Each
# worker process builds them once per run, on its first chunk of that run.
_cider_corpora = {}


def cider_corpus(run):
    # Keyed by the run's creation time too: a rolled-back transaction (tests) hands out a run id again.
    key = (run.pk, run.created_at)
    if key not in _cider_corpora:
        if len(_cider_corpora) >= 4:
            _cider_corpora.pop(next(iter(_cider_corpora)))
        _cider_corpora[key] = dataset_cider_corpus(run.dataset)
    return _cider_corpora[key]


def dataset_cider_corpus(dataset):
    """One item per response that has references: each context's references, weighted by its responses."""
    counts = dict(
        _fetch_plain(
            Context.objects.filter(dataset=dataset)
            # Counted through the join, which no default manager filters: leave the reference
            # pseudo-system's copies of the references out (they are no responses to score).
            .annotate(n=Count("responses", filter=Q(responses__system__is_reference=False)))
            .values_list("id", "n")
        )
    )
    refs = _references(list(counts))
    contexts = [ctx for ctx in refs if counts.get(ctx)]
    return CiderCorpus.from_refs([refs[c] for c in contexts], [counts[c] for c in contexts])


def _finite(value):
    return None if value is None or not math.isfinite(value) else float(value)


def _finite_all(values):
    """`values` with infinities as None (the engine already gives None for NaN)."""
    if math.inf in values or -math.inf in values:  # one C-level scan; infinities are rare
        return [_finite(v) for v in values]
    return values
