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

from annotation.importing.errors import DataImportError, ErrorCollector
from annotation.importing.text import as_lines, describe, iter_csv, iter_jsonl, shown, unstorable

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


def parse_ratings(lines, fmt, *, scale_min=1, scale_max=5, errors=None):
    """Every valid judgement of the file (`lines` from read_lines, or a str), checked against the scale.

    A bad line goes to `errors` (an ErrorCollector) and the reading goes on; without a collector,
    all problems are raised together at the end.
    """
    collector = ErrorCollector() if errors is None else errors
    from_csv = fmt == "csv"
    unit = "row" if from_csv else "line"
    ratings = []
    try:
        if from_csv:
            rows = iter_csv(as_lines(lines), collector, required=REQUIRED, optional=OPTIONAL)
        else:
            rows = iter_jsonl(as_lines(lines), collector)
        seen = {}
        for line, record in rows:
            try:
                rating = _rating(record, line, unit, from_csv, scale_min=scale_min, scale_max=scale_max)
                _check_new_rating(rating, seen, unit)
            except DataImportError as error:
                collector.add(error)
                continue
            ratings.append(rating)
    except DataImportError as fatal:  # the file cannot be read on (encoding, size, CSV header)
        collector.add(fatal)
    if not ratings and not collector:
        collector.add(DataImportError("the file holds no ratings" if from_csv else "the file is empty"))
    if errors is None:
        collector.raise_if_any()
    return ratings


def _check_new_rating(rating, seen, unit):
    key = (rating.worker, rating.context_id, rating.system, rating.aspect)
    first = seen.setdefault(key, rating.line)
    if first != rating.line:
        raise DataImportError(
            f"worker {rating.worker!r} already rated system {rating.system!r} on context "
            f"{rating.context_id!r} for aspect {rating.aspect!r} ({unit} {first})",
            line=rating.line,
            unit=unit,
        )


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
            raise fail(f"must be a string, not {describe(value)}", key)
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


def _seconds(raw, from_csv, fail):
    if raw is None or (from_csv and not raw.strip()):
        return None
    try:
        value = float(raw) if from_csv or not isinstance(raw, bool) else None
    except (TypeError, ValueError):
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise fail(f"{shown(raw)} is not a number of seconds", "seconds")
    return value
