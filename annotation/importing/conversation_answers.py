"""Parse and validate conversation ratings and ACUTE-style comparisons (JSONL or CSV). No database here.

Ratings, one a line:
    {"conversation_id": "d1", "worker": "w7", "aspect": "engaging", "score": 2}             whole conversation
    {"conversation_id": "d1", "turn": 3, "worker": "w7", "aspect": "sensible", "score": 1}  turn 3 (0-based)
`aspect` (default `overall`) and `seconds` are optional. Each aspect has its own scale: `scale_of`
gives it, and a score outside it is refused. Whether turn 3 exists and is the system's is checked
against the dataset (annotation.services.conversation_answers).

Comparisons, one a line:
    {"conversation_a": "d1", "conversation_b": "d9", "worker": "w7", "winner": "a",
     "question": "Who would you prefer to talk to for a long conversation?", "reason": "..."}
`winner` is a, b or tie; `reason` and `seconds` optional. CSV: the same names as columns.
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

RATING_REQUIRED = ("conversation_id", "worker", "score")
RATING_OPTIONAL = ("turn", "aspect", "seconds")
JUDGEMENT_REQUIRED = ("conversation_a", "conversation_b", "worker", "winner", "question")
JUDGEMENT_OPTIONAL = ("reason", "seconds")
WINNERS = ("a", "b", "tie")
MAX_QUESTION_LENGTH = 300  # ConversationJudgement.question
MAX_REASON_LENGTH = 200  # ConversationJudgement.reason


@dataclass(frozen=True)
class ParsedConversationRating:
    line: int
    conversation_id: str
    worker: str
    score: int
    turn: int | None = None
    aspect: str = DEFAULT_ASPECT
    seconds: float | None = None


@dataclass(frozen=True)
class ParsedConversationJudgement:
    line: int
    conversation_a: str
    conversation_b: str
    worker: str
    winner: str
    question: str
    reason: str = ""
    seconds: float | None = None


def parse_conversation_ratings(lines, fmt, *, scale_of, errors=None):
    """Every valid rating of the file; `scale_of(aspect)` is that aspect's `(min, max)`."""

    def parse_line(record, line, unit, from_csv):
        rating = _rating(record, line, unit, from_csv, scale_of)
        key = (rating.worker, rating.conversation_id, rating.turn, rating.aspect)
        what = "the conversation" if rating.turn is None else f"turn {rating.turn}"
        duplicate = (
            f"worker {rating.worker!r} already rated {what} of conversation {rating.conversation_id!r} "
            f"for aspect {rating.aspect!r}"
        )
        return rating, key, duplicate

    return parse_judgement_lines(
        lines,
        fmt,
        required=RATING_REQUIRED,
        optional=RATING_OPTIONAL,
        parse_line=parse_line,
        noun="ratings",
        errors=errors,
    )


def parse_conversation_judgements(lines, fmt, *, errors=None):
    """Every valid comparison of the file; the same pair, worker and question once (either order)."""

    def parse_line(record, line, unit, from_csv):
        judgement = _judgement(record, line, unit, from_csv)
        pair = tuple(sorted((judgement.conversation_a, judgement.conversation_b)))
        key = (judgement.worker, pair, judgement.question)
        duplicate = (
            f"worker {judgement.worker!r} already compared conversations {pair[0]!r} and {pair[1]!r} on this question"
        )
        return judgement, key, duplicate

    return parse_judgement_lines(
        lines,
        fmt,
        required=JUDGEMENT_REQUIRED,
        optional=JUDGEMENT_OPTIONAL,
        parse_line=parse_line,
        noun="judgements",
        errors=errors,
    )


def _failing(line, unit):
    def fail(message, field=None):
        return DataImportError(message, line=line, field=field, unit=unit)

    return fail


def _ids_as_text(record, keys):
    """A numeric conversation id is read as text, as context ids are."""
    return {
        key: str(value) if key in keys and isinstance(value, int) and not isinstance(value, bool) else value
        for key, value in record.items()
    }


def _rating(record, line, unit, from_csv, scale_of):
    fail = _failing(line, unit)
    check_fields_known_and_present(
        record, required=RATING_REQUIRED, optional=RATING_OPTIONAL, from_csv=from_csv, fail=fail
    )
    record = _ids_as_text(record, ("conversation_id",))
    values = text_fields(record, ("conversation_id", "worker"), strip=from_csv, fail=fail)
    aspect = aspect_of(record, fail)
    score = whole_number(record["score"], from_csv, fail, "score")
    scale_min, scale_max = scale_of(aspect)
    if not scale_min <= score <= scale_max:
        raise fail(f"{score} is outside the scale {scale_min}-{scale_max} of aspect {aspect!r}", "score")
    turn = record.get("turn")
    if turn is not None and not (from_csv and not str(turn).strip()):
        turn = whole_number(turn, from_csv, fail, "turn")
        if turn < 0:
            raise fail(f"{turn} is not a turn index (0 is the first turn)", "turn")
    else:
        turn = None
    return ParsedConversationRating(
        line=line,
        score=score,
        turn=turn,
        aspect=aspect,
        seconds=seconds_of(record.get("seconds"), from_csv, fail),
        **values,
    )


def _judgement(record, line, unit, from_csv):
    fail = _failing(line, unit)
    check_fields_known_and_present(
        record, required=JUDGEMENT_REQUIRED, optional=JUDGEMENT_OPTIONAL, from_csv=from_csv, fail=fail
    )
    record = _ids_as_text(record, ("conversation_a", "conversation_b"))
    values = text_fields(record, JUDGEMENT_REQUIRED, strip=True, fail=fail)
    if values["conversation_a"] == values["conversation_b"]:
        raise fail(
            "a conversation cannot be compared with itself (conversation_a equals conversation_b)", "conversation_b"
        )
    winner = values["winner"].lower()
    if winner not in WINNERS:
        raise fail(f"{shown(values['winner'])} is not a, b or tie", "winner")
    values["winner"] = winner
    if len(values["question"]) > MAX_QUESTION_LENGTH:
        raise fail(f"longer than {MAX_QUESTION_LENGTH} characters", "question")
    reason = record.get("reason") or ""
    if reason:
        reason = text_fields({"reason": reason}, ("reason",), strip=True, fail=fail)["reason"]
        if len(reason) > MAX_REASON_LENGTH:
            raise fail(f"longer than {MAX_REASON_LENGTH} characters", "reason")
    return ParsedConversationJudgement(
        line=line, reason=reason, seconds=seconds_of(record.get("seconds"), from_csv, fail), **values
    )


def whole_number(raw, from_csv, fail, field):
    """An integer from a CSV cell or a JSON number (4.0 is 4; 4.5, true and "4" are refused in JSONL)."""
    if from_csv:
        try:
            return int(str(raw).strip())
        except ValueError:
            raise fail(f"{shown(raw)} is not a whole number", field) from None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise fail(f"must be a whole number, not {describe(raw)}", field)
    if isinstance(raw, float):
        if not math.isfinite(raw) or not raw.is_integer():
            raise fail(f"{describe(raw) if not math.isfinite(raw) else raw} is not a whole number", field)
        raw = int(raw)
    return raw
