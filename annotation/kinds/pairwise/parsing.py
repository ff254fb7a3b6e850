"""Parse and validate a pairwise judgements file (JSONL or CSV) into plain records. No database here.

JSONL, one judgement per line:
    {"context_id": "c1", "system_a": "hred", "system_b": "vhred", "worker": "w7", "winner": "b"}
`winner` is "a", "b" or "tie"; `aspect` (default `overall`) and `seconds` are optional;
`survey` and `confirmed` (written by export_pairwise) are informational and ignored. A side
named `(reference)` is the context's first reference (as export_pairwise writes it). CSV: the
same names as columns. Converting another tool's log (ParlAI's ACUTE-Eval, for instance) is a
matter of writing these fields, one comparison a line.
"""

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
from annotation.importing.text import shown

REQUIRED = ("context_id", "system_a", "system_b", "worker", "winner")
# survey, confirmed and the worker's integrity columns (issue 40): written by export, ignored here
OPTIONAL = ("aspect", "seconds", "survey", "confirmed", "worker_integrity_flags", "worker_competence_mace",
            "worker_competence_dawid_skene")
WINNERS = ("a", "b", "tie")

__all__ = ["DEFAULT_ASPECT", "ParsedJudgement", "parse_pairwise"]


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

    def parse_line(record, line, unit, from_csv):
        judgement = _judgement(record, line, unit, from_csv)
        pair = tuple(sorted((judgement.system_a, judgement.system_b)))
        key = (judgement.worker, judgement.context_id, pair, judgement.aspect)
        duplicate = (
            f"worker {judgement.worker!r} already compared {pair[0]!r} and {pair[1]!r} on context "
            f"{judgement.context_id!r} for aspect {judgement.aspect!r}"
        )
        return judgement, key, duplicate

    return parse_judgement_lines(
        lines, fmt, required=REQUIRED, optional=OPTIONAL, parse_line=parse_line, noun="judgements", errors=errors
    )


def _judgement(record, line, unit, from_csv):
    def fail(message, field=None):
        return DataImportError(message, line=line, field=field, unit=unit)

    check_fields_known_and_present(record, required=REQUIRED, optional=OPTIONAL, from_csv=from_csv, fail=fail)
    values = text_fields(record, REQUIRED, strip=True, fail=fail)
    if values["system_a"] == values["system_b"]:
        raise fail("a system cannot be compared with itself (system_a equals system_b)", "system_b")
    winner = values["winner"].lower()
    if winner not in WINNERS:
        raise fail(f"{shown(values['winner'])} is not a, b or tie", "winner")
    values["winner"] = winner
    return ParsedJudgement(
        line=line,
        aspect=aspect_of(record, fail),
        seconds=seconds_of(record.get("seconds"), from_csv, fail),
        **values,
    )
