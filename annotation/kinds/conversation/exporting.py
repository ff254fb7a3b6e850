"""Write a conversation survey's ratings in the import format of `import_conversation_ratings`
(docs/conversations.md): `{"conversation_id", "worker", "aspect", "score"}` for the whole
conversation, with `"turn": i` for a bot turn (flags as 0/1), so export -> import is lossless.
Workers are the dataset's pseudonyms unless `real_ids`; CSV cells go through csv_safety."""

import json

from annotation.models import Annotator, ConversationRating
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

COLUMNS = ("conversation_id", "turn", "worker", "aspect", "score", "seconds")


def conversation_ratings_export(*, dataset, survey, stream, fmt="jsonl", real_ids=False):
    """Write `survey`'s conversation ratings to `stream`; the count."""
    rows = list(
        ConversationRating.objects.filter(survey=survey)
        .order_by("conversation__position", "turn__index", "annotator_id", "aspect")
        .values_list("conversation__external_id", "turn__index", "annotator_id", "aspect", "score", "seconds")
    )
    if real_ids:
        workers = dict(Annotator.objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=dataset)
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(COLUMNS)
    for conversation_id, turn, annotator_id, aspect, score, seconds in rows:
        record = {"conversation_id": conversation_id, "worker": workers[annotator_id], "aspect": aspect}
        if turn is not None:
            record["turn"] = turn
        record["score"] = score
        if seconds is not None:
            record["seconds"] = seconds
        if writer:
            writer.writerow([record.get(column, "") for column in COLUMNS])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(rows)
