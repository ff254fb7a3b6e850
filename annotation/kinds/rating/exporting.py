"""Write a dataset's ratings in the import format (JSONL or CSV), so import -> export -> import is
lossless. CSV cells go through annotation.csv_safety (a formula-like cell gets a leading quote)."""

import json

from annotation.models import Annotator, Rating, Response
from annotation.quality.integrity_export import RATING_INTEGRITY_COLUMNS, csv_value, integrity_cells, worker_integrity
from annotation.quality.selectors import CONFIRMED_BY_PLATFORM, unconfirmed_platform_work
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

RATING_COLUMNS = ("context_id", "system", "worker", "score", "aspect", "seconds", "survey")


def ratings_export(*, dataset, stream, survey=None, fmt="jsonl", real_ids=False):
    """Write the ratings of `dataset` (of one `survey`, or of all) to `stream`. Returns the count.

    When several surveys are written each record names its survey, which import ignores. Workers
    are written as their dataset pseudonyms (A1, A2, ...; annotation.pseudonyms) unless `real_ids`:
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
    # Issue 40: each worker's flags and competence within the survey (import ignores these columns).
    columns += RATING_INTEGRITY_COLUMNS
    integrity = worker_integrity(dataset.surveys.filter(pk__in={row[1] for row in rows}).order_by("pk"))
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
        record.update(integrity_cells(integrity, survey_pk, annotator_pk, RATING_INTEGRITY_COLUMNS))
        if writer:
            writer.writerow([csv_value(column, record.get(column)) for column in columns])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
