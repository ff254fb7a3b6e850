"""Parse and validate a ratings file (JSONL or CSV) into plain records. No database here.

JSONL, one judgement per line:
    {"context_id": "c1", "system": "hred", "worker": "w7", "score": 4, "aspect": "overall"}
`aspect` is optional (default `overall`), `seconds` optional (time spent on the item).
`survey` (written by export_ratings when several surveys are exported) is informational
and ignored. CSV: the same names as columns.
"""

import math
import re
from dataclasses import dataclass

from annotation.importing.errors import DataImportError
from annotation.importing.text import iter_csv, iter_jsonl, unstorable

DEFAULT_ASPECT = "overall"
REQUIRED = ("context_id", "system", "worker", "score")
OPTIONAL = ("aspect", "seconds", "survey", "confirmed")  # survey, confirmed: written by export, ignored
MAX_WORKER_LENGTH = 200
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")


@dataclass(frozen=True)
class ParsedRating:
    line: int
    context_id: str
    system: str
    worker: str
    score: int
    aspect: str = DEFAULT_ASPECT
    seconds: float | None = None


def parse_ratings(text, fmt, *, scale_min=1, scale_max=5):
    """Every judgement of the file, validated against the scale; raises DataImportError at the first problem."""
    if fmt == "csv":
        rows = iter_csv(text, required=REQUIRED, optional=OPTIONAL)
        unit = "row"
    else:
        rows = iter_jsonl(text)
        unit = "line"
    ratings = []
    seen = {}
    for line, record in rows:
        rating = _rating(record, line, unit, fmt == "csv", scale_min=scale_min, scale_max=scale_max)
        key = (rating.worker, rating.context_id, rating.system, rating.aspect)
        first = seen.setdefault(key, line)
        if first != line:
            raise DataImportError(
                f"worker {rating.worker!r} already rated system {rating.system!r} on context "
                f"{rating.context_id!r} for aspect {rating.aspect!r} ({unit} {first})",
                line=line,
                unit=unit,
            )
        ratings.append(rating)
    if not ratings:
        raise DataImportError("the file holds no ratings")
    return ratings


def _rating(record, line, unit, from_csv, *, scale_min, scale_max):
    def fail(message, field=None):
        return DataImportError(message, line=line, field=field, unit=unit)

    unknown = set(record) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        return_field = sorted(unknown)[0]
        raise fail(f"unknown field (allowed: {', '.join(REQUIRED + OPTIONAL)})", return_field)
    for key in REQUIRED:
        if key not in record or (from_csv and not record[key].strip()):
            raise fail("missing", key)
    values = {}
    for key in ("context_id", "system", "worker"):
        value = record[key]
        if key == "context_id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise fail(f"must be a string, not {type(value).__name__}", key)
        value = value.strip() if from_csv else value
        if not value.strip():
            raise fail("must not be empty", key)
        if unstorable(value):
            raise fail(unstorable(value), key)
        values[key] = value
    if len(values["worker"]) > MAX_WORKER_LENGTH:
        raise fail(f"longer than {MAX_WORKER_LENGTH} characters", "worker")
    score = _score(record["score"], from_csv, fail)
    if not scale_min <= score <= scale_max:
        raise fail(f"{score} is outside the survey's scale {scale_min}-{scale_max}", "score")
    aspect = record.get("aspect") or DEFAULT_ASPECT
    if not isinstance(aspect, str) or not _SLUG.match(aspect.strip()):
        raise fail("must be a short name of letters, digits, '-' or '_'", "aspect")
    seconds = _seconds(record.get("seconds"), from_csv, fail)
    return ParsedRating(line=line, score=score, aspect=aspect.strip(), seconds=seconds, **values)


def _score(raw, from_csv, fail):
    if from_csv:
        try:
            return int(raw.strip())
        except ValueError:
            raise fail(f"{raw!r} is not a whole number", "score") from None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise fail(f"must be a whole number, not {type(raw).__name__}", "score")
    if isinstance(raw, float):
        if not raw.is_integer():
            raise fail(f"{raw} is not a whole number", "score")
        raw = int(raw)
    return raw


def _seconds(raw, from_csv, fail):
    if raw is None or (from_csv and not raw.strip()):
        return None
    try:
        value = float(raw) if from_csv or not isinstance(raw, bool) else None
    except (TypeError, ValueError):
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise fail(f"{raw!r} is not a number of seconds", "seconds")
    return value
