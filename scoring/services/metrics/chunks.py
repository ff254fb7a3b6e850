"""Score one chunk of a metric run: read its responses and references, score them with the pure
engine (scoring.metrics) and the learned metrics' hooks (ADEM, LLM judges), and write the scores
(scoring.services.metrics.scores). Also the CIDEr document frequencies a run's chunks share.
"""

import contextlib
import functools
import math
import threading

from django.db import connection, transaction
from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX
from django.db.models import Count, F, Q
from django.utils import timezone

import scoring.metrics as engine
from annotation.models import Context, Reference, Response
from scoring.metrics.cider import CiderCorpus
from scoring.models import MetricChunk, MetricRun
from scoring.services.adem import scoring as services_adem_scoring
from scoring.services.judges import judging as services_judges
from scoring.services.metrics import progress as metric_progress
from scoring.services.metrics.scores import scores_upsert

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
        progress = metric_progress.chunk_progress(run=run, chunk=chunk, write=_phase_writer(run))
        response_ids, scores = _chunk_scores(run, chunk.response_ids, progress=progress)
    with _writing_turn(), transaction.atomic():
        written = scores_upsert(response_ids=response_ids, scores=scores, versions=run.versions)
        marked = (
            MetricChunk.objects.filter(pk=chunk.pk)
            .exclude(status=MetricChunk.Status.DONE)
            .update(status=MetricChunk.Status.DONE, finished_at=timezone.now(), attempts=attempt)
        )
        if marked:
            # its phase is this chunk's last family: counted now in done_chunks (the next chunk writes its own)
            MetricRun.objects.filter(pk=run.pk).update(
                done_chunks=F("done_chunks") + 1, heartbeat_at=timezone.now(), phase={}
            )
    return written


def _writing_turn():
    return _sqlite_writing_turn if connection.vendor == "sqlite" else contextlib.nullcontext()


def _phase_writer(run):
    """Store a chunk's phase on its run. On SQLite another thread may be writing a chunk's scores:
    a phase that only says which family is next is then skipped (it would wait in SQLite's busy
    handler, and the scoring with it); one that announces a load waits its turn (loads take seconds)."""

    def write(phase, *, urgent):
        if connection.vendor != "sqlite":
            metric_progress.metric_run_phase_set(run=run, phase=phase)
            return True
        if not _sqlite_writing_turn.acquire(blocking=urgent):
            return False
        try:
            metric_progress.metric_run_phase_set(run=run, phase=phase)
        finally:
            _sqlite_writing_turn.release()
        return True

    return write


def _chunk_scores(run, chunk_response_ids, *, progress=None):
    """`(response ids, {metric: values in their order})` of a chunk: read and scored, nothing written.

    `progress` (an `engine.Progress` callback) hears of each family before it scores, counted
    against all the run's metrics: the engine's, then each learned one (ADEM model, LLM judge)."""
    responses = _chunk_responses(chunk_response_ids)
    scored = [row for row in responses if row[2]]
    learned = [name for name in run.metrics if name.startswith(_LEARNED_PREFIXES)]
    reference_based = [name for name in run.metrics if name not in learned]
    corpus = cider_corpus(run) if "cider" in run.metrics else None
    total = len(run.metrics)

    def engine_step(step):
        if progress is not None and step.family:  # the engine's own end is not the run's when learned metrics follow
            progress(engine.Progress(step.family, step.done, total, step.loading))

    values = engine.score(
        [s[1] for s in scored], [s[2] for s in scored], reference_based, corpus=corpus, progress=engine_step
    )
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
    for position, name in enumerate(learned):
        if progress is not None:
            progress(engine.Progress(name, len(reference_based) + position, total))
        learned_values = _learned_values(run, name, response_ids)
        scores[name] = [_finite(learned_values.get(rid)) for rid in response_ids]
    return response_ids, scores


_LEARNED_PREFIXES = (*services_adem_scoring.MODEL_METRIC_PREFIXES, services_judges.JUDGE_METRIC_PREFIX)


def _learned_values(run, name, response_ids):
    owner = run.dataset.owner_id
    if name.startswith(services_judges.JUDGE_METRIC_PREFIX):
        return services_judges.judge_metric_values(metric=name, response_ids=response_ids, owner=owner, run=run)
    return services_adem_scoring.adem_metric_values(metric=name, response_ids=response_ids, owner=owner)


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
    for context_id, text in fetch_plain(rows.values_list("context_id", "text")):
        if context_id in wanted:
            refs.setdefault(context_id, []).append(text)
    return refs


def fetch_plain(rows):
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


def cider_corpus_forget(*, run):
    """Drop the run's document frequencies (its run is closed: no chunk of it will ask again)."""
    _cider_corpora.pop((run.pk, run.created_at), None)


def dataset_cider_corpus(dataset):
    """One item per response that has references: each context's references, weighted by its responses."""
    counts = dict(
        fetch_plain(
            Context.objects.filter(dataset=dataset)
            # grouped by the id alone: annotating the model groups by every column, the turns' JSON
            # included (SQLite, 20,000 contexts: 39 ms against 29)
            .values("id")
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
