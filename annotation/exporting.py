"""Write a dataset or its ratings in the import formats, so import -> export -> import is lossless.

CSV cells go through annotation.text.csv_safety: a cell a spreadsheet would run as a formula gets a
leading quote, which RateLab's CSV import takes off again.

Each response also carries a `"metrics"` object in JSONL when later layers registered
response extras (annotation.extensions.points): derived data for the reader, ignored on import.
"""

import json
import re

from annotation.extensions.points import response_extras
from annotation.importing.datasets import CSV_COLUMNS
from annotation.models import Annotator, Rating, Reference, Response
from annotation.quality.selectors import CONFIRMED_BY_PLATFORM, unconfirmed_platform_work
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.text import csv_safety

# What a download of real worker ids is marked with (file name and HTTP header), so nobody
# shares it by mistake.
REAL_IDS_SUFFIX = "real-worker-ids"
REAL_IDS_HEADER = "X-RateLab-Worker-Ids"
RATING_COLUMNS = ("context_id", "system", "worker", "score", "aspect", "seconds", "survey")
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


def ratings_export(*, dataset, stream, survey=None, fmt="jsonl", real_ids=False):
    """Write the ratings of `dataset` (of one `survey`, or of all) to `stream`. Returns the count.

    When several surveys are written each record names its survey, which import ignores. Workers
    are written as their dataset pseudonyms (A1, A2, ...; annotation.selectors.pseudonyms) unless `real_ids`:
    the file then carries the platforms' worker ids, for the researcher's own use only.
    """
    # Through the (small) survey table: a join over responses and contexts misleads PostgreSQL's
    # planner right after a bulk import, before statistics are refreshed.
    ratings = Rating.objects.filter(survey__in=list(dataset.surveys.values_list("pk", flat=True)))
    if survey is not None:
        ratings = ratings.filter(survey=survey)
    # Plain rows joined in Python: one wide join with ORDER BY is slow on PostgreSQL at 200,000 rows.
    responses = {
        pk: (position, system, context_id)
        for pk, position, system, context_id in Response.objects.filter(context__dataset=dataset).values_list(
            "pk", "context__position", "system__name", "context__external_id"
        )
    }
    survey_names = dict(dataset.surveys.values_list("pk", "name"))
    # Crowd-platform ratings say whether their platform confirmed them (a task URL's worker id proves nothing).
    platform_surveys = set(dataset.surveys.filter(provider__in=CONFIRMED_BY_PLATFORM).values_list("pk", flat=True))
    unconfirmed = set(ratings.filter(unconfirmed_platform_work()).values_list("pk", flat=True))
    rows = list(ratings.values_list("pk", "survey_id", "response_id", "annotator_id", "score", "aspect", "seconds"))
    if real_ids:
        workers = dict(Annotator.objects.filter(pk__in={row[3] for row in rows}).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=dataset)
    rows.sort(key=lambda row: (row[1], responses[row[2]][:2], row[0]))
    name_survey = survey is None and len({row[1] for row in rows}) > 1
    columns = [*RATING_COLUMNS[: 7 if name_survey else 6]]
    if any(row[1] in platform_surveys for row in rows):
        columns.append("confirmed")
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(columns)
    count = 0
    for rating_pk, survey_pk, response_pk, annotator_pk, score, aspect, seconds in rows:
        _, system, context_id = responses[response_pk]
        record = {
            "context_id": context_id,
            "system": system,
            "worker": workers[annotator_pk],
            "score": score,
            "aspect": aspect,
        }
        if seconds is not None:
            record["seconds"] = seconds
        if name_survey:
            record["survey"] = survey_names[survey_pk]
        if survey_pk in platform_surveys:
            record["confirmed"] = rating_pk not in unconfirmed
        if writer:
            writer.writerow([record.get(column, "") for column in columns])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count


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
