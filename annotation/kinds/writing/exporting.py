"""A writing survey's replies with their integrity flags and telemetry, one record per written reply
(`manage.py export_replies`): for the researcher who wants to read or filter them elsewhere.

Workers are written as their dataset pseudonyms (A1, A2, ...), as every export writes them, unless
`real_ids`. CSV cells go through annotation.services.text.csv_safety (a formula-like cell gets a leading
quote); the flag names are joined by ";" and the telemetry is its JSON text there."""

import json

from annotation.models import Annotator, Context, Survey, WrittenResponse
from annotation.quality.integrity_report import raised_names, survey_reply_flags, written_rows
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

REPLY_COLUMNS = ("worker", "context_id", "text", "status", "integrity_flags", "telemetry")


def not_writing_problem(survey):
    """Why `survey` has no written replies to export (None when it is a writing survey)."""
    if survey.task_type != Survey.TaskType.WRITE:
        return f"survey {survey.name!r} is not a writing survey: it has no written replies"
    return None


def replies_export(*, survey, stream, fmt="jsonl", real_ids=False):
    """Write every written reply of `survey` (rejected assignments' too, with their status) to `stream`.
    Flags are computed over the replies that count (a rejected reply is compared with none and gets
    no flag). Returns the number of records."""
    counted = written_rows(survey)
    flags = survey_reply_flags(survey, counted)
    rows = list(
        WrittenResponse.objects.filter(assignment__hit__survey=survey)
        .order_by("pk")
        .values_list("pk", "assignment__annotator_id", "context_id", "text", "status", "telemetry")
    )
    contexts = dict(Context.objects.filter(pk__in={row[2] for row in rows}).values_list("pk", "external_id"))
    if real_ids:
        workers = dict(Annotator.objects.filter(pk__in={row[1] for row in rows}).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=survey.dataset)
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(REPLY_COLUMNS)
    for pk, annotator_id, context_pk, text, status, telemetry in rows:
        record = {
            "worker": workers.get(annotator_id, ""),
            "context_id": contexts[context_pk],
            "text": text,
            "status": status,
            "integrity_flags": raised_names(flags[pk]) if pk in flags else [],
            "telemetry": telemetry,
        }
        if writer:
            writer.writerow([
                *(record[key] for key in ("worker", "context_id", "text", "status")),
                ";".join(record["integrity_flags"]),
                json.dumps(telemetry, sort_keys=True) if telemetry is not None else "",
            ])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(rows)
