"""Write an ACUTE-Eval survey's judgements in the import format of `import_conversation_judgements`
(docs/conversations.md), `conversation_a` being the side shown on the left; workers as the
dataset's pseudonyms unless `real_ids`; CSV cells through csv_safety."""

import json

from annotation.models import Annotator, ConversationJudgement
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

COLUMNS = ("conversation_a", "conversation_b", "worker", "winner", "question", "reason", "seconds")


def acute_export(*, dataset, survey, stream, fmt="jsonl", real_ids=False):
    rows = list(
        ConversationJudgement.objects.filter(survey=survey)
        .order_by("id")
        .values_list(
            "conversation_a__external_id",
            "conversation_b__external_id",
            "annotator_id",
            "winner",
            "question",
            "reason",
            "seconds",
        )
    )
    if real_ids:
        workers = dict(Annotator.objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=dataset)
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(COLUMNS)
    for a, b, annotator_id, winner, question, reason, seconds in rows:
        record = {"conversation_a": a, "conversation_b": b, "worker": workers[annotator_id], "winner": winner}
        record["question"] = question
        if reason:
            record["reason"] = reason
        if seconds is not None:
            record["seconds"] = seconds
        if writer:
            writer.writerow([record.get(column, "") for column in COLUMNS])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(rows)
