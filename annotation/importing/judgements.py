"""What reading a ratings file and a pairwise file have in common (no database here).

Both are JSONL or CSV, one judgement a line, with the same rules: every bad line is reported and
reading goes on, a worker may judge the same thing once, and `worker`, `aspect` and `seconds` are
checked alike. The file-specific modules (ratings.py, pairwise.py) say only what a line holds.
"""

import math
import re

from annotation.importing.errors import DataImportError, ErrorCollector
from annotation.importing.text import (
    as_lines,
    describe,
    iter_csv,
    iter_jsonl,
    lookalike_name_problem,
    shown,
    unstorable,
)

DEFAULT_ASPECT = "overall"
MAX_WORKER_LENGTH = 200
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")


def parse_judgement_lines(lines, fmt, *, required, optional, parse_line, noun, errors=None):
    """Every line `parse_line(record, line, unit, from_csv)` accepts, in file order.

    `parse_line` returns `(parsed, key, duplicate)`: a second line with the same key is refused with
    the `duplicate` message it gave, naming the first line of that key. A bad
    line goes to `errors` and reading goes on; without a collector every problem is raised together
    at the end.
    """
    collector = ErrorCollector() if errors is None else errors
    from_csv = fmt == "csv"
    unit = "row" if from_csv else "line"
    parsed = []
    try:
        if from_csv:
            rows = iter_csv(as_lines(lines), collector, required=required, optional=optional)
        else:
            rows = iter_jsonl(as_lines(lines), collector)
        first_line_of = {}
        for line, record in rows:
            try:
                judgement, key, duplicate = parse_line(record, line, unit, from_csv)
                first = first_line_of.setdefault(key, line)
                if first != line:
                    raise DataImportError(f"{duplicate} ({unit} {first})", line=line, unit=unit)
            except DataImportError as error:
                collector.add(error)
                continue
            parsed.append(judgement)
    except DataImportError as fatal:  # the file cannot be read on (encoding, size, CSV header)
        collector.add(fatal)
    if not parsed and not collector:
        collector.add(DataImportError(f"the file holds no {noun}" if from_csv else "the file is empty"))
    if errors is None:
        collector.raise_if_any()
    return parsed


def check_fields_known_and_present(record, *, required, optional, from_csv, fail):
    unknown = set(record) - set(required) - set(optional)
    if unknown:
        raise fail(f"unknown field (allowed: {', '.join(required + optional)})", sorted(unknown)[0])
    for key in required:
        if key not in record or (from_csv and not str(record[key]).strip()):
            raise fail("missing", key)


def text_fields(record, keys, *, strip, fail):
    """The named fields as non-empty strings (a numeric context_id is read as text)."""
    values = {}
    for key in keys:
        value = record[key]
        if key == "context_id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise fail(f"must be a string, not {describe(value)}", key)
        value = value.strip() if strip else value
        if not value.strip():
            raise fail("must not be empty", key)
        if unstorable(value):
            raise fail(unstorable(value), key)
        values[key] = value
    if "worker" in values and len(values["worker"]) > MAX_WORKER_LENGTH:
        raise fail(f"longer than {MAX_WORKER_LENGTH} characters", "worker")
    # `w1` and `w1 ` (or one with a zero-width space) would be two annotators shown alike
    if "worker" in values and lookalike_name_problem(values["worker"]):
        raise fail(lookalike_name_problem(values["worker"]), "worker")
    return values


def aspect_of(record, fail):
    aspect = record.get("aspect") or DEFAULT_ASPECT
    if not isinstance(aspect, str) or not _SLUG.match(aspect.strip()):
        raise fail("must be a short name of letters, digits, '-' or '_'", "aspect")
    return aspect.strip()


def seconds_of(raw, from_csv, fail):
    """Time spent on the item, or None when not given; a negative or non-number is refused."""
    if raw is None or (from_csv and not raw.strip()):
        return None
    try:
        value = float(raw) if from_csv or not isinstance(raw, bool) else None
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer of 309 digits or more
        value = None
    if value is None or not math.isfinite(value) or value < 0:
        raise fail(f"{shown(raw)} is not a number of seconds", "seconds")
    return value
