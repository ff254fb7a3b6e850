"""Parse and validate a conversations file (JSONL or CSV) into plain records. No database here.

JSONL, one conversation per line:
    {"conversation_id": "d1", "system": "meena", "seed": "topic-7",
     "turns": [{"speaker": "user", "text": "Hi!"}, {"speaker": "system", "text": "Hello!"}], ...}
Turns of speaker `system` are the evaluated system's; every other speaker is its partner. `seed`
is optional. Other keys of a line go to the conversation's `meta`.

CSV, one row per turn, the rows of a conversation together and in order:
    conversation_id,system,seed,speaker,text,meta
`system` (and `seed`, when given) is the same on every row of a conversation (rows after the first
may leave it empty); `meta` is an optional JSON object on the conversation's first row.

The same limits and refusals as the dataset import: every bad line is listed with its field,
ids and names that look like others are refused, and no field holds more than 131,072 characters.
"""

import csv
from dataclasses import dataclass, field

from annotation.importing.errors import DataImportError, parse_records
from annotation.importing.text import (
    as_lines,
    describe,
    iter_csv,
    iter_jsonl,
    loads_json,
    lookalike_name_problem,
    read_lines,
    shown,
    unstorable,
    unstorable_json,
)
from annotation.models.conversations import SYSTEM_SPEAKER
from annotation.services.text.reserved import reserved_system_name_problem

MAX_ID_LENGTH = 200  # Conversation.external_id, Conversation.seed
MAX_SYSTEM_LENGTH = 100  # System.name
MAX_SPEAKER_LENGTH = 100  # ConversationTurn.speaker
RECORD_KEYS = ("conversation_id", "system", "turns", "seed")
TURN_KEYS = ("speaker", "text")
CSV_COLUMNS = ("conversation_id", "system", "seed", "speaker", "text", "meta")
CSV_REQUIRED = ("conversation_id", "system", "speaker", "text")


@dataclass
class ParsedConversation:
    external_id: str
    line: int
    system: str
    seed: str = ""
    turns: list = field(default_factory=list)  # [(speaker, text)]
    meta: dict = field(default_factory=dict)


def parse_conversations(lines, fmt, errors=None):
    """Every valid conversation of the file (`lines` from read_lines, or a str).

    A bad line goes to `errors` (an ErrorCollector) and the reading goes on; without a collector
    every problem is raised together at the end.
    """
    return parse_records(
        as_lines(lines), fmt, errors, parse_csv=_parse_csv, parse_jsonl=_parse_jsonl, noun="conversations"
    )


# --- JSONL ------------------------------------------------------------------------


def _parse_jsonl(lines, errors, conversations):
    seen = {}
    for line, record in iter_jsonl(lines, errors):
        try:
            conversation = _from_record(record, line)
            _check_new_id(conversation, seen, "line")
        except DataImportError as error:
            errors.add(error)
            continue
        conversations.append(conversation)


def _from_record(record, line):
    def fail(message, where):
        return DataImportError(message, line=line, field=where)

    for key in ("conversation_id", "system", "turns"):
        if key not in record:
            raise fail("missing", key)
    external_id = _conversation_id(record["conversation_id"], fail)
    system = _system_name(record["system"], fail)
    seed = _seed(record.get("seed"), fail)
    raw_turns = record["turns"]
    if not isinstance(raw_turns, list) or not raw_turns:
        raise fail("must be a non-empty list of turns", "turns")
    turns = [_turn(turn, fail, f"turns[{i}]") for i, turn in enumerate(raw_turns)]
    conversation = ParsedConversation(external_id=external_id, line=line, system=system, seed=seed, turns=turns)
    _require_system_turn(conversation, fail, "turns")
    conversation.meta = {key: value for key, value in record.items() if key not in RECORD_KEYS}
    for key, value in conversation.meta.items():
        _require_json(key, fail, "meta")
        _require_json(value, fail, key if len(key) <= 40 else key[:40] + "…")
    return conversation


def _turn(turn, fail, where):
    if not isinstance(turn, dict):
        raise fail(f"a turn is an object {{'speaker': ..., 'text': ...}}, not {describe(turn)}", where)
    unknown = set(turn) - set(TURN_KEYS)
    if unknown:
        raise fail(f"unknown key {shown(sorted(unknown)[0])} in a turn (allowed: speaker, text)", where)
    for key in TURN_KEYS:
        if key not in turn:
            raise fail("missing", f"{where}.{key}")
    speaker = _speaker(turn["speaker"], fail, f"{where}.speaker")
    _require_str(turn["text"], fail, f"{where}.text")
    return speaker, turn["text"]


# --- CSV --------------------------------------------------------------------------


def _parse_csv(lines, errors, conversations):
    seen = {}
    current = None
    broken = set()  # conversations with a refused row: dropped, their error already listed
    for row_number, row in iter_csv(lines, errors, required=CSV_REQUIRED, optional=CSV_COLUMNS):

        def fail(message, where, row_number=row_number):
            return DataImportError(message, line=row_number, field=where, unit="row")

        try:
            external_id = _conversation_id(row["conversation_id"].strip(), fail)
        except DataImportError as error:
            errors.add(error)  # a row of no conversation: nothing to mark as broken
            continue
        try:
            if current is None or current.external_id != external_id:
                current = ParsedConversation(external_id=external_id, line=row_number, system="")
                conversations.append(current)
                _check_new_id(current, seen, "row")
                _first_row(current, row, fail)
            else:
                _later_row(current, row, fail)
            speaker = _speaker(row["speaker"].strip(), fail, "speaker")
            _require_str(row["text"], fail, "text")
            current.turns.append((speaker, row["text"]))
        except DataImportError as error:
            errors.add(error)
            broken.add(id(current))
    for conversation in list(conversations):
        if id(conversation) in broken:
            conversations.remove(conversation)
            continue
        if not any(speaker == SYSTEM_SPEAKER for speaker, _ in conversation.turns):
            message = f"conversation {conversation.external_id!r} has no turn of speaker {SYSTEM_SPEAKER!r}"
            errors.add(DataImportError(message, line=conversation.line, field="speaker", unit="row"))
            conversations.remove(conversation)


def _first_row(conversation, row, fail):
    conversation.system = _system_name(row["system"].strip(), fail)
    conversation.seed = _seed(row.get("seed", "").strip() or None, fail)
    conversation.meta = _csv_meta(row.get("meta", ""), fail)


def _later_row(conversation, row, fail):
    """A further turn's row: it repeats the conversation's system and seed or leaves them empty."""
    for column, value in (("system", conversation.system), ("seed", conversation.seed)):
        given = row.get(column, "").strip()
        if given and given != value:
            raise fail(
                f"{shown(given)} differs from {shown(value)} on the conversation's first row (row {conversation.line})",
                column,
            )
    if row.get("meta", "").strip():
        raise fail("a conversation's meta belongs on its first row", "meta")


def _csv_meta(raw, fail):
    if not raw.strip():
        return {}
    try:
        meta = loads_json(raw)
    except ValueError as exc:
        raise fail(str(exc), "meta") from None
    if not isinstance(meta, dict):
        raise fail("must be a JSON object", "meta")
    _require_json(meta, fail, "meta")
    for key in meta:
        # Every export writes meta beside the real columns: {"system": ...} would stand in for one.
        if key in RECORD_KEYS:
            raise fail(f"{key!r} is a field of its own, not meta; rename the key", "meta")
    return meta


# --- shared checks ----------------------------------------------------------------


def _conversation_id(value, fail):
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    _require_str(value, fail, "conversation_id")
    if not value.strip():
        raise fail("must not be empty", "conversation_id")
    if len(value) > MAX_ID_LENGTH:
        raise fail(f"longer than {MAX_ID_LENGTH} characters", "conversation_id")
    _require_plain_name(value, fail, "conversation_id")
    return value


def _system_name(value, fail):
    _require_str(value, fail, "system")
    if not value.strip():
        raise fail("must not be empty", "system")
    if len(value) > MAX_SYSTEM_LENGTH:
        raise fail(f"longer than {MAX_SYSTEM_LENGTH} characters", "system")
    if reserved_system_name_problem(value):
        raise fail(reserved_system_name_problem(value), "system")
    _require_plain_name(value, fail, "system")
    return value


def _seed(value, fail):
    if value is None or value == "":
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    _require_str(value, fail, "seed")
    if len(value) > MAX_ID_LENGTH:
        raise fail(f"longer than {MAX_ID_LENGTH} characters", "seed")
    _require_plain_name(value, fail, "seed")
    return value


def _speaker(value, fail, where):
    _require_str(value, fail, where)
    if not value.strip():
        raise fail(
            f"must not be empty ({SYSTEM_SPEAKER!r} for the evaluated system, any other name for its partner)", where
        )
    if len(value) > MAX_SPEAKER_LENGTH:
        raise fail(f"longer than {MAX_SPEAKER_LENGTH} characters", where)
    _require_plain_name(value, fail, where)
    return value


def _require_system_turn(conversation, fail, where):
    if not any(speaker == SYSTEM_SPEAKER for speaker, _ in conversation.turns):
        raise fail(f"no turn of speaker {SYSTEM_SPEAKER!r}: the evaluated system never speaks", where)


def _require_plain_name(value, fail, where):
    problem = lookalike_name_problem(value)
    if problem:
        raise fail(problem, where)


def _require_str(value, fail, where):
    if not isinstance(value, str):
        raise fail(f"must be a string, not {describe(value)}", where)
    problem = unstorable(value)
    if problem:
        raise fail(problem, where)


def _require_json(value, fail, where):
    problem = unstorable_json(value)
    if problem:
        raise fail(problem, where)


def _check_new_id(conversation, seen, unit):
    first = seen.setdefault(conversation.external_id, conversation.line)
    if first != conversation.line:
        raise DataImportError(
            f"duplicate conversation id {conversation.external_id!r} (first at {unit} {first})",
            line=conversation.line,
            field="conversation_id",
            unit=unit,
        )


def holds_conversations(file, fmt):
    """Whether `file` looks like a conversations file (its first record or header names `conversation_id`),
    so that one upload page takes both kinds of dataset. A file that cannot be read says no: the
    dataset import then reports why."""
    try:
        for _, line in read_lines(file):
            if not line.strip():
                continue
            if fmt == "csv":
                return "conversation_id" in [column.strip() for column in next(csv.reader([line]), [])]
            try:
                record = loads_json(line)
            except ValueError:
                return '"conversation_id"' in line
            return isinstance(record, dict) and "conversation_id" in record
    except (DataImportError, csv.Error):
        return False
    return False
