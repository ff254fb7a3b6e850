"""Parse and validate a pairwise judgements file (JSONL or CSV) into plain records. No database here.

JSONL, one judgement per line:
    {"context_id": "c1", "system_a": "hred", "system_b": "vhred", "worker": "w7", "winner": "b"}
`winner` is "a", "b" or "tie"; `aspect` (default `overall`) and `seconds` are optional;
`survey` and `confirmed` (written by export_pairwise) are informational and ignored. A side
named `(reference)` is the context's first reference (as export_pairwise writes it). CSV: the
same names as columns. Converting another tool's log (ParlAI's ACUTE-Eval, for instance) is a
matter of writing these fields, one comparison a line.
"""

import re
from dataclasses import dataclass

from annotation.importing.errors import DataImportError, ErrorCollector
from annotation.importing.ratings import MAX_WORKER_LENGTH, _seconds
from annotation.importing.text import as_lines, describe, iter_csv, iter_jsonl, shown, unstorable

DEFAULT_ASPECT = "overall"
REQUIRED = ("context_id", "system_a", "system_b", "worker", "winner")
OPTIONAL = ("aspect", "seconds", "survey", "confirmed")
WINNERS = ("a", "b", "tie")
_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,50}$")


@dataclass(frozen=True)
class ParsedJudgement:
    line: int
    context_id: str
    system_a: str
    system_b: str
    worker: str
    winner: str
    aspect: str = DEFAULT_ASPECT
    seconds: float | None = None


def parse_pairwise(lines, fmt, *, errors=None):
    """Every valid judgement of the file; a bad line goes to `errors` and reading goes on."""
    collector = ErrorCollector() if errors is None else errors
    from_csv = fmt == "csv"
    unit = "row" if from_csv else "line"
    judgements = []
    try:
        if from_csv:
            rows = iter_csv(as_lines(lines), collector, required=REQUIRED, optional=OPTIONAL)
        else:
            rows = iter_jsonl(as_lines(lines), collector)
        seen = {}
        for line, record in rows:
            try:
                judgement = _judgement(record, line, unit, from_csv)
                _check_new(judgement, seen, unit)
            except DataImportError as error:
                collector.add(error)
                continue
            judgements.append(judgement)
    except DataImportError as fatal:  # the file cannot be read on (encoding, size, CSV header)
        collector.add(fatal)
    if not judgements and not collector:
        collector.add(DataImportError("the file holds no judgements" if from_csv else "the file is empty"))
    if errors is None:
        collector.raise_if_any()
    return judgements


def _check_new(judgement, seen, unit):
    pair = tuple(sorted((judgement.system_a, judgement.system_b)))
    key = (judgement.worker, judgement.context_id, pair, judgement.aspect)
    first = seen.setdefault(key, judgement.line)
    if first != judgement.line:
        raise DataImportError(
            f"worker {judgement.worker!r} already compared {pair[0]!r} and {pair[1]!r} on context "
            f"{judgement.context_id!r} for aspect {judgement.aspect!r} ({unit} {first})",
            line=judgement.line,
            unit=unit,
        )


def _judgement(record, line, unit, from_csv):
    def fail(message, field=None):
        return DataImportError(message, line=line, field=field, unit=unit)

    unknown = set(record) - set(REQUIRED) - set(OPTIONAL)
    if unknown:
        raise fail(f"unknown field (allowed: {', '.join(REQUIRED + OPTIONAL)})", sorted(unknown)[0])
    for key in REQUIRED:
        if key not in record or (from_csv and not str(record[key]).strip()):
            raise fail("missing", key)
    values = {}
    for key in ("context_id", "system_a", "system_b", "worker", "winner"):
        value = record[key]
        if key == "context_id" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise fail(f"must be a string, not {describe(value)}", key)
        value = value.strip()
        if not value:
            raise fail("must not be empty", key)
        if unstorable(value):
            raise fail(unstorable(value), key)
        values[key] = value
    if len(values["worker"]) > MAX_WORKER_LENGTH:
        raise fail(f"longer than {MAX_WORKER_LENGTH} characters", "worker")
    if values["system_a"] == values["system_b"]:
        raise fail("a system cannot be compared with itself (system_a equals system_b)", "system_b")
    winner = values["winner"].lower()
    if winner not in WINNERS:
        raise fail(f"{shown(values['winner'])} is not a, b or tie", "winner")
    values["winner"] = winner
    aspect = record.get("aspect") or DEFAULT_ASPECT
    if not isinstance(aspect, str) or not _SLUG.match(aspect.strip()):
        raise fail("must be a short name of letters, digits, '-' or '_'", "aspect")
    seconds = _seconds(record.get("seconds"), from_csv, fail)
    return ParsedJudgement(line=line, aspect=aspect.strip(), seconds=seconds, **values)
