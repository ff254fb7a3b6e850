"""Model instances from hand-written SQL that joins several tables: for the annotator's busiest requests.

On the path an annotator takes for every task (submit, claim, next page) the ORM spent more CPU
building SQL than the database spent running it (bench/bench_annotator_request.py). The reads there
are few and fixed, so they are written out once; this module turns their rows back into the same
model instances the ORM would have built:

- `columns("a", Assignment)` lists a model's columns under a table alias, in field order;
- `RowReader([Assignment, HIT, Survey])` cuts a row made of such column lists into instances,
  applying each field's database converters as the ORM's compiler does (SQLite returns datetimes
  as text, and JSON arrives as text on both backends), so the instances read the same either way.
  A model whose key is NULL in the row (an outer join that found nothing) becomes None.
"""

from django.db import connection


def columns(alias, model):
    """`alias.col1, alias.col2, ...` for the model's concrete fields, in the order `RowReader` reads them."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(field.column)}" for field in model._meta.concrete_fields)


def _converters(model):
    """Per field, the database converters the ORM's compiler would apply to its column (per connection)."""
    cache = connection.__dict__.setdefault("_ratelab_raw_converters", {})
    if model not in cache:
        per_field = []
        for field in model._meta.concrete_fields:
            column = field.get_col(model._meta.db_table)
            per_field.append(
                (field, column, connection.ops.get_db_converters(column) + column.get_db_converters(connection))
            )
        cache[model] = per_field
    return cache[model]


class RowReader:
    """Cut rows of `columns(...)` lists, one per model in `models`, into model instances."""

    def __init__(self, models):
        self.models = list(models)

    def read(self, row):
        """One instance per model (None where an outer join found no row), in `models`' order."""
        wanted = sum(len(_converters(model)) for model in self.models)
        if len(row) < wanted:
            raise ValueError(f"a row of {len(row)} columns is shorter than the models' {wanted}")
        instances, start = [], 0
        for model in self.models:
            fields = _converters(model)
            values = list(row[start : start + len(fields)])
            start += len(fields)
            pk_index = next(i for i, (field, _, _) in enumerate(fields) if field.primary_key)
            if values[pk_index] is None:
                instances.append(None)
                continue
            for index, (_field, column, convs) in enumerate(fields):
                for convert in convs:
                    values[index] = convert(values[index], column, connection)
            instances.append(model.from_db(connection.alias, [field.attname for field, _, _ in fields], values))
        return instances

    def extra(self, row):
        """The columns after the models' ones (counts and flags a query adds), as they came."""
        return row[sum(len(_converters(model)) for model in self.models) :]


def fetch(sql, params, models):
    """Run `sql` (a SELECT of `columns(...)` lists for `models`, in order) and read every row: a list
    of `[instance per model]` lists."""
    reader = RowReader(models)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [reader.read(row) for row in cursor.fetchall()]
