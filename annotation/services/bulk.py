"""Multi-row INSERT for the largest imports.

bulk_create builds a model instance and prepares every field of every row in Python;
for 200,000 ratings that is most of the time. Here rows are plain tuples already in
database form, sent as `INSERT ... VALUES (...), (...)` in batches that respect the
backend's parameter limit. Only for tables whose rows need no save() logic.
"""

from django.db import connection

# Backends without a stated limit (PostgreSQL) get batches well under the protocol's 65,535.
_MAX_PARAMS_FALLBACK = 30_000
_MAX_ROWS = 5000


def insert_rows(model, fields, rows):
    """Insert `rows` (tuples in the order of `fields`, values ready for the database). Returns the count."""
    meta = model._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in fields)
    max_params = connection.features.max_query_params or _MAX_PARAMS_FALLBACK
    per_batch = max(1, min(_MAX_ROWS, max_params // len(fields)))
    placeholder = "(" + ", ".join(["%s"] * len(fields)) + ")"
    count = 0
    with connection.cursor() as cursor:
        for start in range(0, len(rows), per_batch):
            batch = rows[start : start + per_batch]
            sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES {', '.join([placeholder] * len(batch))}"
            cursor.execute(sql, [value for row in batch for value in row])
            count += len(batch)
    return count


def refresh_statistics(*models):
    """Let PostgreSQL's planner see freshly bulk-loaded tables at once instead of after autovacuum."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in models:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
