"""Writing a dataset's pairwise judgements in the import format of `import_pairwise` (JSONL or CSV).

Collected judgements keep the side each reply was shown on: `system_a` was on the left. CSV cells
pass through `csv_safety`, so a worker id or system name cannot run as a spreadsheet formula. Workers
are written as their dataset pseudonyms (A1, A2, ...; `annotation.selectors.pseudonyms`) unless `real_ids`.
"""

import json

from annotation.models import Annotator, PairwiseJudgement, Survey
from annotation.quality.integrity_export import INTEGRITY_COLUMNS, csv_value, integrity_cells, worker_integrity
from annotation.quality.selectors import CONFIRMED_BY_PLATFORM, unconfirmed_platform_work
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

COLUMNS = ["context_id", "system_a", "system_b", "worker", "winner", "aspect", "seconds", "survey", "confirmed",
           *INTEGRITY_COLUMNS]


def pairwise_export(*, dataset, stream, survey=None, fmt="jsonl", real_ids=False):
    """Write the pairwise judgements of `dataset` (of one `survey`, or all) to `stream`. Returns the count."""
    rows = PairwiseJudgement.objects.filter(survey__dataset=dataset)
    if survey is not None:
        rows = rows.filter(survey=survey)
    unconfirmed = set(rows.filter(unconfirmed_platform_work()).values_list("pk", flat=True))
    records = rows.order_by("survey_id", "context__position", "pk").values_list(
        "pk",
        "context__external_id",
        "response_a__system__name",
        "response_b__system__name",
        "annotator_id",
        "winner",
        "aspect",
        "seconds",
        "survey__name",
        "survey__provider",
        "survey_id",
    )
    # Issue 40: each worker's flags and competence within the survey (import ignores these columns).
    integrity = worker_integrity(Survey.objects.filter(pk__in=rows.values("survey_id").distinct()).order_by("pk"))
    if real_ids:
        workers = dict(Annotator.objects.filter(pairwise_judgements__in=rows).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=dataset)
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(COLUMNS)
    count = 0
    for row in records.iterator():
        (pk, context_id, system_a, system_b, annotator_id, winner, aspect, seconds, survey_name, provider,
         survey_pk) = row
        record = {
            "context_id": context_id,
            "system_a": system_a,
            "system_b": system_b,
            "worker": workers[annotator_id],
            "winner": winner,
            "aspect": aspect,
        }
        if seconds is not None:
            record["seconds"] = seconds
        record["survey"] = survey_name
        if provider in CONFIRMED_BY_PLATFORM:
            record["confirmed"] = pk not in unconfirmed
        record.update(integrity_cells(integrity, survey_pk, annotator_id))
        if writer:
            writer.writerow([csv_value(column, record.get(column)) for column in COLUMNS])
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        count += 1
    return count
