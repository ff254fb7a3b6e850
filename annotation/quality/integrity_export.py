"""Integrity flags and competence beside each answer in the ratings and pairwise exports (issue 40).

Flags and competence belong to a worker within one survey (straight-lining is a property of a worker's
ratings, not of one rating), so the columns are named `worker_…` and repeat on each of that worker's
answers of that survey. They are read from the survey's cached quality report when it is fresh (what the
quality page shows), and computed now otherwise, so an export never carries stale flags. A flag is
evidence for a person to read, not a verdict; the columns say which flags were raised, not who cheated.
"""

from annotation.models import QualityReport
from annotation.quality import data
from annotation.quality.integrity_report import survey_integrity

INTEGRITY_COLUMNS = ("worker_integrity_flags", "worker_competence_mace", "worker_competence_dawid_skene")
# Ratings add the ordinal spammer model's estimate (the one the `competence` rule reads on a rating scale);
# pairwise judgements never have one.
RATING_INTEGRITY_COLUMNS = (*INTEGRITY_COLUMNS, "worker_competence_ordinal")
ESTIMATES = {
    "worker_competence_mace": "mace",
    "worker_competence_dawid_skene": "dawid_skene",
    "worker_competence_ordinal": "ordinal",
}


def _integrity_of(survey):
    cached = QualityReport.objects.filter(survey=survey).values("data", "fingerprint").first()
    if cached and "integrity" in (cached["data"] or {}) and cached["fingerprint"] == data.survey_fingerprint(survey):
        return cached["data"]["integrity"]
    return survey_integrity(survey)


def worker_integrity(surveys):
    """`{(survey pk, annotator pk): {column: value}}` for the workers of `surveys`: the names of the
    flags raised on their ratings (or judgements) and on any of their written replies, sorted, and
    their competence by MACE, Dawid-Skene and, on a rating scale, the ordinal spammer model (the estimate the
    `competence` rule reads there) to 4 decimals (EM's last digits depend on the answers' order, so a
    re-import would not give the same file otherwise; None where the models had too few shared answers or,
    for the ordinal model, the answers are not ratings on a scale)."""
    table = {}
    for survey in surveys:
        for entry in _integrity_of(survey)["workers"]:
            names = {flag["name"] for flag in entry.get("rating_flags") or []}
            names |= {name for name, counted in (entry.get("reply_flags") or {}).items() if counted.get("raised")}
            competence = entry.get("competence") or {}
            table[(survey.pk, entry["annotator_id"])] = {"worker_integrity_flags": sorted(names)} | {
                column: _rounded(competence.get(key)) for column, key in ESTIMATES.items()
            }
    return table


def _rounded(value):
    return round(value, 4) if value is not None else None


def integrity_cells(table, survey_pk, annotator_pk, columns=INTEGRITY_COLUMNS):
    """The `columns` of one answer (empty flags and no competence for a worker the report lacks)."""
    cells = table.get((survey_pk, annotator_pk)) or {"worker_integrity_flags": []} | dict.fromkeys(ESTIMATES)
    return {column: cells[column] for column in columns}


def csv_value(column, value):
    """A cell for CSV: the flag names joined by ';' (names never contain one), None as empty."""
    if value is None:
        return ""
    if column == "worker_integrity_flags":
        return ";".join(value)
    return value
