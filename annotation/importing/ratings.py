"""Parse and validate a ratings file (JSONL or CSV) into plain records. No database here.

JSONL, one judgement per line:
    {"context_id": "c1", "system": "hred", "worker": "w7", "score": 4, "aspect": "overall"}
`aspect` is optional (default `overall`), `seconds` optional (time spent on the item).
`survey` (written by export_ratings when several surveys are exported) is informational
and ignored. CSV: the same names as columns.
"""

import math
from dataclasses import dataclass

from annotation.importing.errors import DataImportError
from annotation.importing.judgements import (
    DEFAULT_ASPECT,
    aspect_of,
    check_fields_known_and_present,
    parse_judgement_lines,
    seconds_of,
    text_fields,
)
from annotation.importing.text import describe, shown

REQUIRED = ("context_id", "system", "worker", "score")
# survey, confirmed and the worker's integrity columns (issue 40): written by export, ignored here
OPTIONAL = (
    "aspect",
    "seconds",
    "survey",
    "confirmed",
    "worker_integrity_flags",
    "worker_competence_mace",
    "worker_competence_dawid_skene",
    "worker_competence_ordinal",
)

__all__ = ["DEFAULT_ASPECT", "ParsedRating", "parse_ratings"]


@dataclass(frozen=True)
class ParsedRating:
    line: int
    context_id: str
    system: str
    worker: str
    score: int
    aspect: str = DEFAULT_ASPECT
    seconds: float | None = None


def parse_ratings(lines, fmt, *, scale_min=1, scale_max=5, errors=None):
    """Every valid judgement of the file (`lines` from read_lines, or a str), checked against the scale.

    A bad line goes to `errors` (an ErrorCollector) and the reading goes on; without a collector,
    all problems are raised together at the end.
    """

    def parse_line(record, line, unit, from_csv):
        rating = _rating(record, line, unit, from_csv, scale_min=scale_min, scale_max=scale_max)
        key = (rating.worker, rating.context_id, rating.system, rating.aspect)
        duplicate = (
            f"worker {rating.worker!r} already rated system {rating.system!r} on context "
            f"{rating.context_id!r} for aspect {rating.aspect!r}"
        )
        return rating, key, duplicate

    return parse_judgement_lines(
        lines, fmt, required=REQUIRED, optional=OPTIONAL, parse_line=parse_line, noun="ratings", errors=errors
    )


def _rating(record, line, unit, from_csv, *, scale_min, scale_max):
    def fail(message, field=None):
        return DataImportError(message, line=line, field=field, unit=unit)

    check_fields_known_and_present(record, required=REQUIRED, optional=OPTIONAL, from_csv=from_csv, fail=fail)
    # JSONL text is kept as written (only CSV cells are trimmed), as before the shared reader
    values = text_fields(record, ("context_id", "system", "worker"), strip=from_csv, fail=fail)
    score = _score(record["score"], from_csv, fail)
    if not scale_min <= score <= scale_max:
        raise fail(f"{score} is outside the survey's scale {scale_min}-{scale_max}", "score")
    return ParsedRating(
        line=line,
        score=score,
        aspect=aspect_of(record, fail),
        seconds=seconds_of(record.get("seconds"), from_csv, fail),
        **values,
    )


def _score(raw, from_csv, fail):
    if from_csv:
        try:
            return int(raw.strip())
        except ValueError:
            raise fail(f"{shown(raw)} is not a whole number", "score") from None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise fail(f"must be a whole number, not {describe(raw)}", "score")
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise fail(f"must be a whole number, not {describe(raw)}", "score")
        if not raw.is_integer():
            raise fail(f"{raw} is not a whole number", "score")
        raw = int(raw)
    return raw
