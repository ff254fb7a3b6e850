"""Store a conversation submission's ratings: hundreds of rows at once, cheaply.

A HIT of six DSTC9-length conversations is about 540 rows: five whole-conversation answers and, on
each of ~17 bot turns, five flags (an unticked one stored as 0, so flag rates have their
denominator). Built as model instances and saved by `bulk_create`, they cost the submit request
most of its ~80 ms of CPU (instance set-up, then Django compiling every value into the INSERT),
and the submit is what keeps 50 annotators' HIT pages waiting (docs/performance.md). So the rows
are plain tuples, and on PostgreSQL they go in one `INSERT ... SELECT FROM unnest(arrays)`: a
statement of eight array parameters, whatever the number of rows. Elsewhere (SQLite) they become
instances for `bulk_create`. Either way in the caller's transaction, and a row that breaks a
unique constraint raises IntegrityError as before, so the submit still stores all or nothing.
"""

from typing import NamedTuple

from django.db import connection
from django.utils import timezone

from annotation.models import ConversationRating


class RatingRow(NamedTuple):
    survey_id: int
    annotator_id: int
    assignment_id: int
    conversation_id: int
    turn_id: int | None  # None: the whole conversation
    aspect: str
    score: int
    seconds: float | None


# Each column's PostgreSQL array type, in RatingRow's order, for unnest.
_ARRAY_TYPES = ("bigint[]", "bigint[]", "bigint[]", "bigint[]", "bigint[]", "text[]", "integer[]", "double precision[]")


def ratings_insert(rows):
    """Insert `rows` (RatingRow) as ConversationRating rows."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        ConversationRating.objects.bulk_create(ConversationRating(**row._asdict()) for row in rows)
        return
    now = timezone.now()  # what auto_now_add would have set, once for the submission
    meta = ConversationRating._meta
    quote = connection.ops.quote_name
    columns = [meta.get_field(name.removesuffix("_id")).column for name in RatingRow._fields]
    arrays = ", ".join(f"%s::{kind}" for kind in _ARRAY_TYPES)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(map(quote, columns))}, {quote('created_at')}) "
        f"SELECT *, %s FROM unnest({arrays})"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [now, *(list(column) for column in zip(*rows, strict=True))])
