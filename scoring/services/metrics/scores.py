"""Write metric scores: the MetricScore upsert of a chunk, as one statement per batch of rows,
written out for SQLite and for PostgreSQL (the two databases the settings accept).
"""

import functools
import sqlite3

from django.db import connection
from django.utils import timezone

from scoring.models import MetricScore

WRITE_BATCH = 2000  # rows per INSERT on PostgreSQL
SQLITE_WRITE_BATCH = 200  # rows per INSERT on SQLite (see _upsert_sqlite)


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
    `metric_chunks._scoring_turn`); writing BLEU-1..4 for 10,000 responses in one thread went from ~110 to
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
