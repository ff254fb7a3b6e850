"""Write a dataset's conversations in the import format, so import -> export -> import gives the same file.

JSONL writes one conversation a line (`conversation_id`, `system`, `seed` when there is one, `turns`,
then the meta keys); CSV one row a turn, its cells neutralised by annotation.csv_safety as every
RateLab CSV export (the import undoes it). Live-chat conversations are written like imported ones.
"""

import json

from annotation.importing.conversations import CSV_COLUMNS, RECORD_KEYS
from annotation.models import ConversationTurn
from annotation.services.text import csv_safety


def conversations_export(*, dataset, stream, fmt="jsonl"):
    """Write every conversation of `dataset` to the text `stream`. Returns the number of conversations."""
    records = conversation_records(dataset)
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(CSV_COLUMNS)
        for record in records:
            meta = {k: v for k, v in record.items() if k not in RECORD_KEYS}
            for i, turn in enumerate(record["turns"]):
                writer.writerow(
                    [
                        record["conversation_id"],
                        record["system"],
                        record.get("seed", ""),
                        turn["speaker"],
                        turn["text"],
                        json.dumps(meta, ensure_ascii=False) if meta and i == 0 else "",
                    ]
                )
    else:
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)


def conversation_records(dataset):
    """Every conversation of `dataset` in file order, as the JSONL import reads it."""
    turns = {}
    rows = (
        ConversationTurn.objects.filter(conversation__dataset=dataset)
        .order_by("conversation_id", "index")
        .values_list("conversation_id", "speaker", "text")
    )
    for conversation_pk, speaker, text in rows:
        turns.setdefault(conversation_pk, []).append({"speaker": speaker, "text": text})
    records = []
    for pk, external_id, system, seed, meta in dataset.conversations.order_by("position").values_list(
        "pk", "external_id", "system__name", "seed", "meta"
    ):
        record = {"conversation_id": external_id, "system": system}
        if seed:
            record["seed"] = seed
        record["turns"] = turns.get(pk, [])
        # The real fields win over a meta key of the same name (import refuses those; old rows may hold one).
        record.update({key: value for key, value in meta.items() if key not in record and key not in RECORD_KEYS})
        records.append(record)
    return records
