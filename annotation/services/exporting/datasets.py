"""Write a dataset in the import format, so import -> export -> import is lossless; and the names of
downloads. (A survey's answers are written by its kind: annotation/kinds/<kind>/exporting.py.)

CSV cells go through annotation.services.text.csv_safety: a cell a spreadsheet would run as a formula gets a
leading quote, which RateLab's CSV import takes off again.

Each response also carries a `"metrics"` object in JSONL when later layers registered
response extras (annotation.services.extensions.points): derived data for the reader, ignored on import.
"""

import json
import re

from annotation.importing.datasets import CSV_COLUMNS
from annotation.models import Reference, Response
from annotation.services.extensions.points import response_extras
from annotation.services.text import csv_safety

# What a download of real worker ids is marked with (file name and HTTP header), so nobody
# shares it by mistake.
REAL_IDS_SUFFIX = "real-worker-ids"
REAL_IDS_HEADER = "X-RateLab-Worker-Ids"
# Characters a file name must not carry even once quoted: path separators and control characters.
_UNSAFE_IN_FILENAME = re.compile(r"[\x00-\x1f\x7f/\\]+")


def download_filename(name, suffix):
    """`<name>-<suffix>` for a download, from a name a researcher chose.

    Only path separators and control characters are replaced here; Django's
    content_disposition_header quotes or percent-encodes the rest, so quotes, semicolons or
    line breaks in a name never add a parameter to the header or break it.
    """
    cleaned = _UNSAFE_IN_FILENAME.sub("_", name).strip(" .") or "download"
    return f"{cleaned[:100]}-{suffix}"


def dataset_export(*, dataset, stream, fmt="jsonl"):
    """Write every context of `dataset` to the text `stream`. Returns the number of contexts."""
    records = list(_dataset_records(dataset, with_metrics=fmt == "jsonl"))
    if fmt == "csv":
        _write_dataset_csv(records, stream)
    else:
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)


def _dataset_records(dataset, *, with_metrics):
    references = {}
    for context_pk, text in (
        Reference.objects.filter(context__dataset=dataset)
        .order_by("context_id", "position")
        .values_list("context_id", "text")
    ):
        references.setdefault(context_pk, []).append(text)
    responses = {}
    for row in (
        Response.objects.filter(context__dataset=dataset)
        .order_by("context_id", "system__name")
        .values("pk", "context_id", "system__name", "text", "meta")
    ):
        responses.setdefault(row["context_id"], []).append(row)
    extras = {}
    if with_metrics:
        extras = response_extras(dataset, [r["pk"] for rows in responses.values() for r in rows])
    for context in dataset.contexts.order_by("position").values("pk", "external_id", "turns", "meta"):
        record = {
            "context_id": context["external_id"],
            "context": [_turn_out(turn) for turn in context["turns"]],
            "references": references.get(context["pk"], []),
            "responses": [_response_out(row, extras.get(row["pk"])) for row in responses.get(context["pk"], [])],
        }
        yield _with_meta(record, context["meta"])


def _turn_out(turn):
    # A turn without a speaker goes out as a plain string, as most files write it.
    if turn.get("speaker") is None:
        return turn["text"]
    return {"speaker": turn["speaker"], "text": turn["text"]}


def _with_meta(record, meta):
    """`record` followed by the meta keys it does not hold: the real fields always win (a meta
    naming one was stored before import refused that, and would otherwise replace it)."""
    return {**record, **{key: value for key, value in meta.items() if key not in record}}


def _response_out(row, extras):
    """The response as import reads it; `extras` are the registered providers' keys (scoring's is
    `{"metrics": {name: value}}`), written as they are: `"metrics": {"bleu1": …}` as the README
    documents, not wrapped in another `"metrics"` object."""
    response = _with_meta({"system": row["system__name"], "text": row["text"]}, row["meta"])
    for key, value in (extras or {}).items():
        if value:
            response[key] = value
    return response


def _write_dataset_csv(records, stream):
    writer = csv_safety.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for record in records:
        meta = {k: v for k, v in record.items() if k not in ("context_id", "context", "references", "responses")}
        for i, turn in enumerate(record["context"]):
            speaker, text = (turn["speaker"], turn["text"]) if isinstance(turn, dict) else ("", turn)
            writer.writerow([record["context_id"], "context", speaker, "", text, _json(meta) if i == 0 else ""])
        for text in record["references"]:
            writer.writerow([record["context_id"], "reference", "", "", text, ""])
        for response in record["responses"]:
            response_meta = {k: v for k, v in response.items() if k not in ("system", "text", "metrics")}
            writer.writerow(
                [record["context_id"], "response", "", response["system"], response["text"], _json(response_meta)]
            )


def _json(value):
    return json.dumps(value, ensure_ascii=False) if value else ""
