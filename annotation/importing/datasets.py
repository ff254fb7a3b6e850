"""Parse and validate a dataset file (JSONL or CSV) into plain records. No database here.

JSONL, one context per line:
    {"context_id": "c1", "context": ["turn", {"speaker": "B", "text": "turn"}],
     "references": ["..."], "responses": [{"system": "hred", "text": "..."}], ...extra keys}
Extra keys of a line go into the context's `meta`, extra keys of a response into the
response's `meta`. `metrics` (written by export_dataset) is derived data and is ignored.

CSV, one row per turn, reference or response, rows of one context together:
    context_id,kind,speaker,system,text,meta
`kind` is `context` (a turn; `speaker` optional), `reference` or `response` (`system`
required). `meta` is an optional JSON object: on a context's first row it is the context's
meta, on a response row the response's meta.
"""

from dataclasses import dataclass, field

from annotation.importing.errors import DataImportError, parse_records
from annotation.importing.text import (
    as_lines,
    describe,
    iter_csv,
    iter_jsonl,
    loads_json,
    lookalike_name_problem,
    shown,
    unstorable,
    unstorable_json,
)
from annotation.services.text.reserved import reserved_system_name_problem

MAX_ID_LENGTH = 200
MAX_SYSTEM_LENGTH = 100
CONTEXT_KEYS = ("context_id", "context", "references", "responses")
RESPONSE_KEYS = ("system", "text")
# Written by export for the reader's benefit, recomputed by the app, never imported.
DERIVED_KEYS = frozenset({"metrics"})
CSV_COLUMNS = ("context_id", "kind", "speaker", "system", "text", "meta")
MAX_SHOWN_KEY = 40  # an error names an extra key by at most this many characters
CSV_KINDS = ("context", "reference", "response")


@dataclass
class ParsedResponse:
    system: str
    text: str
    meta: dict = field(default_factory=dict)


@dataclass
class ParsedContext:
    external_id: str
    line: int
    turns: list = field(default_factory=list)
    references: list = field(default_factory=list)
    responses: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)


def parse_dataset(lines, fmt, errors=None):
    """Every valid context of the file (`lines` from read_lines, or a str).

    A bad line does not stop the reading: its problem goes to `errors` (an ErrorCollector) and
    the next line is read. Without a collector, all problems are raised together at the end.
    """
    return parse_records(as_lines(lines), fmt, errors, parse_csv=_parse_csv, parse_jsonl=_parse_jsonl, noun="contexts")


# --- JSONL ------------------------------------------------------------------------


def _parse_jsonl(lines, errors, contexts):
    seen = {}
    for line, record in iter_jsonl(lines, errors):
        try:
            context = _context_from_record(record, line)
            _check_new_id(context, seen)
        except DataImportError as error:
            errors.add(error)
            continue
        contexts.append(context)


def _context_from_record(record, line):
    for key in ("context_id", "context", "responses"):
        if key not in record:
            raise DataImportError("missing", line=line, field=key)
    external_id = _context_id(record["context_id"], line)
    turns_raw = record["context"]
    if not isinstance(turns_raw, list) or not turns_raw:
        raise DataImportError("must be a non-empty list of turns", line=line, field="context")
    turns = [_turn(turn, line, f"context[{i}]") for i, turn in enumerate(turns_raw)]
    references_raw = record.get("references", [])
    if not isinstance(references_raw, list):
        raise DataImportError("must be a list of strings", line=line, field="references")
    for i, reference in enumerate(references_raw):
        _require_str(reference, line, f"references[{i}]")
    responses_raw = record["responses"]
    if not isinstance(responses_raw, list):
        raise DataImportError("must be a list of responses", line=line, field="responses")
    context = ParsedContext(external_id=external_id, line=line, turns=turns, references=list(references_raw))
    for i, response in enumerate(responses_raw):
        _add_response(context, _response(response, line, f"responses[{i}]"), line, f"responses[{i}].system")
    context.meta = {k: v for k, v in record.items() if k not in CONTEXT_KEYS and k not in DERIVED_KEYS}
    _require_json_extra_keys(context.meta, line, key_field="meta", value_prefix="")
    return context


def _turn(turn, line, where):
    if isinstance(turn, str):
        _require_str(turn, line, where)
        return {"speaker": None, "text": turn}
    if not isinstance(turn, dict):
        raise DataImportError("a turn is a string or {'speaker': ..., 'text': ...}", line=line, field=where)
    unknown = set(turn) - {"speaker", "text"}
    if unknown:
        raise DataImportError(f"unknown key {sorted(unknown)[0]!r} in a turn", line=line, field=where)
    if "text" not in turn:
        raise DataImportError("missing", line=line, field=f"{where}.text")
    _require_str(turn["text"], line, f"{where}.text")
    speaker = turn.get("speaker")
    if speaker is not None:
        _require_str(speaker, line, f"{where}.speaker")
    return {"speaker": speaker or None, "text": turn["text"]}


def _response(response, line, where):
    if not isinstance(response, dict):
        raise DataImportError("a response is an object {'system': ..., 'text': ...}", line=line, field=where)
    for key in RESPONSE_KEYS:
        if key not in response:
            raise DataImportError("missing", line=line, field=f"{where}.{key}")
    system = _system_name(response["system"], line, f"{where}.system")
    _require_str(response["text"], line, f"{where}.text")
    meta = {k: v for k, v in response.items() if k not in RESPONSE_KEYS and k not in DERIVED_KEYS}
    _require_json_extra_keys(meta, line, key_field=where, value_prefix=f"{where}.")
    return ParsedResponse(system=system, text=response["text"], meta=meta)


# --- CSV --------------------------------------------------------------------------


def _parse_csv(lines, errors, contexts):
    seen = {}
    current = None
    broken = set()  # contexts with a refused row: "needs a 'context' row" would only repeat that
    rows = iter_csv(lines, errors, required=("context_id", "kind", "text"), optional=CSV_COLUMNS)
    for row_number, row in rows:
        try:
            external_id = _context_id(row["context_id"].strip(), row_number, unit="row")
            meta_owner = None
            if current is None or current.external_id != external_id:
                current = ParsedContext(external_id=external_id, line=row_number)
                _check_new_id(current, seen, unit="row")
                contexts.append(current)
                meta_owner = "context"
            _add_csv_row(current, row, row_number, meta_owner)
        except DataImportError as error:
            errors.add(error)
            if current is not None:
                broken.add(id(current))
    for context in list(contexts):
        if not context.turns:
            contexts.remove(context)
            if id(context) not in broken:
                errors.add(DataImportError("a context needs at least one 'context' row", line=context.line, unit="row"))


def _add_csv_row(context, row, row_number, meta_owner):
    kind = row["kind"].strip()
    speaker = row.get("speaker", "").strip()
    system = row.get("system", "").strip()
    meta = _csv_meta(row.get("meta", ""), row_number)
    for column in ("text", "speaker"):
        _require_str(row.get(column, ""), row_number, column, unit="row")
    if kind == "context":
        if meta and meta_owner != "context":
            raise DataImportError("context meta belongs on the context's first row", line=row_number, unit="row")
        context.turns.append({"speaker": speaker or None, "text": row["text"]})
        if meta_owner == "context":
            context.meta = _meta_of(meta, CONTEXT_KEYS, row_number)
    elif kind == "reference":
        if meta:
            raise DataImportError("references carry no meta", line=row_number, field="meta", unit="row")
        context.references.append(row["text"])
    elif kind == "response":
        if not system:
            raise DataImportError("missing (required on response rows)", line=row_number, field="system", unit="row")
        system = _system_name(system, row_number, "system", unit="row")
        meta = _meta_of(meta, RESPONSE_KEYS, row_number)
        _add_response(context, ParsedResponse(system, row["text"], meta), row_number, "system", unit="row")
    else:
        raise DataImportError(
            f"unknown kind {shown(kind)}; use one of: {', '.join(CSV_KINDS)}", line=row_number, field="kind", unit="row"
        )
    if kind != "response" and system:
        raise DataImportError(f"only response rows name a system, not {kind} rows", line=row_number, unit="row")


def _meta_of(meta, fields, row_number):
    """A meta cell's keys, none of which may be a field of its own (JSONL keys, CSV columns): every
    export writes meta beside those fields, so {"context_id": ...} would stand in for the real one.
    `metrics` is derived data the app recomputes, ignored as in JSONL."""
    for key in meta:
        if key in fields:
            raise DataImportError(
                f"{key!r} is a field of its own, not meta; rename the key", line=row_number, field="meta", unit="row"
            )
    return {key: value for key, value in meta.items() if key not in DERIVED_KEYS}


def _csv_meta(raw, row_number):
    if not raw.strip():
        return {}
    try:
        meta = loads_json(raw)
    except ValueError as exc:
        raise DataImportError(str(exc), line=row_number, field="meta", unit="row") from None
    if not isinstance(meta, dict):
        raise DataImportError("must be a JSON object", line=row_number, field="meta", unit="row")
    _require_json(meta, row_number, "meta", unit="row")
    return meta


# --- shared checks ----------------------------------------------------------------


def _context_id(value, line, unit="line"):
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataImportError(f"must be a string, not {describe(value)}", line=line, field="context_id", unit=unit)
    value = str(value)
    _require_str(value, line, "context_id", unit)
    if not value.strip():
        raise DataImportError("must not be empty", line=line, field="context_id", unit=unit)
    if len(value) > MAX_ID_LENGTH:
        raise DataImportError(f"longer than {MAX_ID_LENGTH} characters", line=line, field="context_id", unit=unit)
    _require_plain_name(value, line, "context_id", unit)
    return value


def _system_name(value, line, where, unit="line"):
    _require_str(value, line, where, unit)
    if not value.strip():
        raise DataImportError("must not be empty", line=line, field=where, unit=unit)
    if len(value) > MAX_SYSTEM_LENGTH:
        raise DataImportError(f"longer than {MAX_SYSTEM_LENGTH} characters", line=line, field=where, unit=unit)
    if reserved_system_name_problem(value):
        raise DataImportError(reserved_system_name_problem(value), line=line, field=where, unit=unit)
    _require_plain_name(value, line, where, unit)
    return value


def _require_plain_name(value, line, where, unit):
    """An id or system name that looks like no other (JSONL keeps white space; CSV cells are trimmed before this)."""
    problem = lookalike_name_problem(value)
    if problem:
        raise DataImportError(problem, line=line, field=where, unit=unit)


def _require_str(value, line, where, unit="line"):
    if not isinstance(value, str):
        raise DataImportError(f"must be a string, not {describe(value)}", line=line, field=where, unit=unit)
    problem = unstorable(value)
    if problem:
        raise DataImportError(problem, line=line, field=where, unit=unit)


def _require_json(value, line, where, unit="line"):
    problem = unstorable_json(value)
    if problem:
        raise DataImportError(problem, line=line, field=where, unit=unit)


def _require_json_extra_keys(meta, line, *, key_field, value_prefix):
    """The extra keys of a JSONL record or response (kept as its meta): a value the database cannot
    hold is named by its key (`field 'score'`), as the file spells it; the file has no `meta` field.
    A key that cannot be stored itself has no printable name, so `key_field` names where it is."""
    for key, value in meta.items():
        _require_json(key, line, key_field)
        shown = key if len(key) <= MAX_SHOWN_KEY else key[:MAX_SHOWN_KEY] + "…"
        _require_json(value, line, value_prefix + shown)


def _check_new_id(context, seen, unit="line"):
    first = seen.setdefault(context.external_id, context.line)
    if first != context.line:
        raise DataImportError(
            f"duplicate context id {context.external_id!r} (first at {unit} {first})",
            line=context.line,
            field="context_id",
            unit=unit,
        )


def _add_response(context, response, line, where, unit="line"):
    if any(existing.system == response.system for existing in context.responses):
        raise DataImportError(
            f"duplicate system {response.system!r} in context {context.external_id!r}",
            line=line,
            field=where,
            unit=unit,
        )
    context.responses.append(response)
