"""Writing a survey's best-worst judgements as JSONL or CSV: one line per judgement. `systems` lists
the tuple's systems in the order the page showed them; `best` and `worst` name the systems picked;
`context_ids` the context of each shown reply, in the same order (all one context's, or, for a
survey whose sets cross contexts, each its own: `context_id` is then empty). CSV cells pass through
`csv_safety` (a worker id or a system name cannot run as a spreadsheet formula) and the CSV writes
`systems` joined by "|". Workers are their dataset pseudonyms (A1, A2, ...) unless `real_ids`, as in
the other exports.
"""

import json

from annotation.models import Annotator, BWSJudgement, Response
from annotation.selectors.pseudonyms import pseudonym_map
from annotation.services.text import csv_safety

COLUMNS = ["worker", "context_id", "systems", "best", "worst", "seconds", "survey", "context_ids"]
SYSTEMS_SEPARATOR = "|"


def bws_export(*, dataset, stream, survey=None, fmt="jsonl", real_ids=False):
    """Write the best-worst judgements of `dataset` (of one `survey`, or all) to `stream`. Returns the count."""
    rows = BWSJudgement.objects.filter(survey__dataset=dataset)
    if survey is not None:
        rows = rows.filter(survey=survey)
    rows = rows.order_by("survey_id", "context__position", "pk")
    records = list(
        rows.values_list("context__external_id", "annotator_id", "responses", "best_id", "worst_id", "seconds",
                         "survey__name")
    )  # fmt: skip
    shown = {pk for record in records for pk in record[2]}
    system_of, context_of = {}, {}
    for pk, system, context in Response.objects.filter(pk__in=shown).values_list(
        "pk", "system__name", "context__external_id"
    ):
        system_of[pk], context_of[pk] = system, context
    if real_ids:
        workers = dict(Annotator.objects.filter(bws_judgements__in=rows).values_list("pk", "worker_id"))
    else:
        workers = pseudonym_map(dataset=dataset)
    writer = None
    if fmt == "csv":
        writer = csv_safety.writer(stream)
        writer.writerow(COLUMNS)
    for context_id, annotator_id, responses, best, worst, seconds, survey_name in records:
        record = {
            "worker": workers[annotator_id],
            "context_id": context_id,
            "systems": [system_of[pk] for pk in responses],
            "best": system_of[best],
            "worst": system_of[worst],
            "seconds": seconds,
            "survey": survey_name,
            "context_ids": [context_of[pk] for pk in responses],
        }
        if writer:
            writer.writerow([SYSTEMS_SEPARATOR.join(record[column]) if column in ("systems", "context_ids") else
                             ("" if record[column] is None else record[column]) for column in COLUMNS])  # fmt: skip
        else:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    return len(records)
