"""Turning an uploaded or named file into lines or rows, with errors that say where.

Files are read line by line, never whole: memory follows the records kept, and a size limit
(`max_bytes`, the web upload limit) stops the reading as soon as it is passed.
"""

import csv
import io
import math
from pathlib import Path

from annotation.importing.errors import DataImportError
from annotation.services.text.csv_safety import restore
from config.security.json_input import MAX_JSON_DEPTH, json_loads

FORMATS = ("jsonl", "csv")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
_BOM = b"\xef\xbb\xbf"
# Python refuses to convert integers longer than this (sys.get_int_max_str_digits()).
MAX_INT_DIGITS = 4300
# The most characters one field may hold, in JSONL as in CSV (the csv module's own cell limit, which
# CSV imports have always had): a 10 MB turn imported from JSONL made a 10 MB dataset page.
MAX_FIELD_CHARS = 131_072


def read_bytes(file):
    """The raw content of `file`: a path, bytes, or an open (binary or text) file object."""
    return b"".join(_binary_lines(file))


def decode(data):
    """UTF-8 text of `data` (a leading byte-order mark is dropped); refuses other encodings and empty files."""
    text = "".join(line for _, line in read_lines(data))
    if not text.strip():
        raise DataImportError("the file is empty")
    return text


def detect_format(fmt, file):
    """`fmt` if given, else guessed from the file name's suffix; JSONL when nothing says otherwise."""
    if fmt:
        if fmt not in FORMATS:
            raise DataImportError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
        return fmt
    name = file if isinstance(file, (str, Path)) else getattr(file, "name", "") or ""
    return _SUFFIXES.get(Path(str(name)).suffix.lower(), "jsonl")


def read_lines(file, *, max_bytes=None):
    """Yield `(line_number, text)` for each line of `file` (ending kept), decoded as UTF-8.

    Lines end at "\\n" only: str.splitlines() also breaks at U+2028 and form feeds, which JSON
    strings may hold verbatim (export writes them so). Raises DataImportError for bytes that are
    not UTF-8 and as soon as more than `max_bytes` were read.
    """
    refusal = getattr(file, "refusal", None)
    if refusal:
        # An upload that the web's size limit already stopped (annotation/services/runtime/uploads.py).
        raise DataImportError(refusal)
    offset = 0
    for number, line in enumerate(_binary_lines(file, max_bytes), start=1):
        raw = line
        if number == 1 and line.startswith(_BOM):
            raw = line[len(_BOM) :]
            offset += len(_BOM)
        if max_bytes is not None and offset + len(raw) > max_bytes:
            raise DataImportError(too_large_message(max_bytes))
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataImportError(
                f"the file is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset {offset + exc.start}); save it as UTF-8",
                line=number,
            ) from None
        offset += len(raw)
        yield number, text


def as_lines(source):
    """`(line_number, text)` pairs: `source` itself, or the lines of a str (for callers holding text)."""
    if isinstance(source, str):
        return enumerate(_split_keeping(source), start=1)
    return source


def _split_keeping(text):
    # On "\n" only, as read_lines does.
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def too_large_message(max_bytes):
    megabytes = max_bytes / (1024 * 1024)
    shown = f"{megabytes:.0f}" if megabytes >= 1 else f"{megabytes:.2f}"
    return (
        f"the file is larger than the upload limit of {shown} MB (UPLOAD_MAX_MB); split it into smaller "
        "files or ask an administrator to import it with the import command"
    )


def _binary_lines(file, max_bytes=None):
    # One line is read at most up to the limit (+1 byte to notice it is passed), so a file of a
    # single enormous line cannot fill the memory either.
    limit = -1 if max_bytes is None else max_bytes + 1
    if isinstance(file, (str, Path)):
        try:
            with open(file, "rb") as stream:
                yield from _stream_lines(stream, limit)
        except OSError as exc:
            raise DataImportError(f"cannot read {file}: {exc.strerror}") from None
        return
    if isinstance(file, bytes):
        file = io.BytesIO(file)
    elif getattr(file, "seekable", lambda: False)():
        file.seek(0)
    yield from _stream_lines(file, limit)


def _stream_lines(stream, limit):
    read = 0
    while True:
        line = stream.readline(limit if limit < 0 else max(limit - read, 1))
        if not line:
            return
        if isinstance(line, str):
            line = line.encode("utf-8")
        read += len(line)
        yield line
        if 0 <= limit <= read:
            return


# --- JSON -------------------------------------------------------------------------


class _LongNumber:
    """Stands in for an integer too long to convert, so that validation can name its field."""

    def __init__(self, digits):
        self.digits = digits

    def __repr__(self):
        return f"a {self.digits:,}-digit number"


def _parse_int(text):
    digits = len(text.lstrip("-"))
    return _LongNumber(digits) if digits > MAX_INT_DIGITS else int(text)


def loads_json(text):
    """`json.loads` that never crashes on hostile input: returns the value or raises ValueError.

    Nesting the parser can take but deeper than MAX_JSON_DEPTH is left to `unstorable_json`, which
    names the field that holds it."""
    return json_loads(text, max_depth=None, parse_int=_parse_int)


def describe(value):
    """A value's kind for messages: 'str', 'list', 'a 5,000-digit number', 'NaN'..."""
    if isinstance(value, _LongNumber):
        return repr(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else "Infinity"
    return type(value).__name__


# Characters no page shows (zero-width spaces and joiners, word joiner, a byte-order mark inside a
# name) or that reorder what follows (bidirectional embeddings, overrides and isolates): in an id, a
# system name or a worker id they make it look like another, or like something it is not.
INVISIBLE_IN_NAMES = frozenset("\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def lookalike_name_problem(value):
    """Why `value` would look like another name on every page (surrounding white space, which no
    page shows, or an invisible character), or "" when it looks like itself."""
    if value != value.strip():
        return f"{shown(value)} starts or ends with white space, which no page shows; remove it"
    hidden = next((char for char in value if char in INVISIBLE_IN_NAMES), None)
    if hidden is not None:
        return f"contains the invisible character U+{ord(hidden):04X}, which would make it look like another; remove it"
    return ""


def shown(value, limit=40):
    """`repr(value)` cut to `limit` characters, for messages about values that may be huge."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def iter_jsonl(lines, errors):
    """Yield `(line_number, object)` for every non-blank line that is a JSON object; other lines go to `errors`."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            value = loads_json(line)
        except ValueError as exc:
            errors.add(DataImportError(str(exc), line=number, field=_deep_field(line)))
            continue
        if not isinstance(value, dict):
            errors.add(DataImportError(f"expected a JSON object, found {describe(value)}", line=number))
            continue
        # No string is longer than the line that spells it: most lines need no walk at all.
        too_long = _too_long_field(value) if len(line) > MAX_FIELD_CHARS else None
        if too_long is not None:
            where, length = too_long
            message = f"{length:,} characters, longer than the {MAX_FIELD_CHARS:,} a field may hold"
            errors.add(DataImportError(message, line=number, field=where))
            continue
        yield number, value


def _too_long_field(record):
    """`(where, length)` of the first string (value or key) in `record` longer than MAX_FIELD_CHARS,
    named as the import messages name fields (`context[0].text`, `responses[1].system`), or None."""
    pending = [(key, _key_shown(key), value) for key, value in reversed(record.items())]
    while pending:
        key, where, value = pending.pop()
        if len(key) > MAX_FIELD_CHARS:
            return f"{where} (the key)", len(key)
        if isinstance(value, str):
            if len(value) > MAX_FIELD_CHARS:
                return where, len(value)
        elif isinstance(value, dict):
            pending.extend((k, f"{where}.{_key_shown(k)}", v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            pending.extend(("", f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


def _key_shown(key, limit=40):
    return key if len(key) <= limit else f"{key[:limit]}…"


def _deep_field(line):
    """The top-level key whose value is nested too deeply, found by scanning (the parser gave up)."""
    depth, key, in_string, escaped, start = 0, None, False, False, 0
    for index, char in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if depth == 1 and line[index + 1 :].lstrip().startswith(":"):
                    key = line[start + 1 : index]
        elif char == '"':
            in_string, start = True, index
        elif char in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return key
        elif char in "]}":
            depth -= 1
    return None


# --- CSV --------------------------------------------------------------------------


def iter_csv(lines, errors, *, required, optional=()):
    """Yield `(row_number, {column: value})`; the header is row 1; bad rows go to `errors`.

    Each cell is passed through csv_safety.restore, which undoes exactly the formula escape
    that RateLab's CSV exports apply, so an export imports back to identical text.
    """
    reader = csv.reader((line for _, line in lines), strict=False)
    number = 0
    try:
        header = None
        for values in reader:
            number += 1
            if any(value.strip() for value in values):
                header = [column.strip() for column in values]
                break
        if header is None:
            raise DataImportError("the file is empty")
    except csv.Error as exc:
        raise DataImportError(f"broken CSV: {exc}", line=1, unit="row") from None
    header_problem = _header_problem(header, required, optional)
    if header_problem:
        raise DataImportError(header_problem, line=number, unit="row")
    while True:
        try:
            values = next(reader, None)
        except csv.Error as exc:
            # The csv module cannot go on after a broken row: stop here with what was found.
            raise DataImportError(_csv_problem(exc), line=number + 1, unit="row") from None
        if values is None:
            return
        number += 1
        if not values or not any(value.strip() for value in values):
            continue
        if len(values) != len(header):
            errors.add(DataImportError(f"expected {len(header)} fields, found {len(values)}", line=number, unit="row"))
            continue
        yield number, {column: restore(value) for column, value in zip(header, values, strict=True)}


def _csv_problem(exc):
    if "field larger than field limit" in str(exc):
        return (
            f"a cell is longer than {csv.field_size_limit():,} characters, the most a field may hold "
            "(in CSV and JSONL alike)"
        )
    return f"broken CSV: {exc}"


def _header_problem(header, required, optional):
    missing = [column for column in required if column not in header]
    if missing:
        # Naming every missing column and what the header does hold lets a researcher see at once
        # a renamed column, another file's header or a file separated by ';' (one long column).
        plural = "s" if len(missing) > 1 else ""
        names = ", ".join(f"'{column}'" for column in missing)
        return f"missing column{plural} {names} in the header (it has: {_shown_header(header)})"
    known = set(required) | set(optional)
    for column in header:
        if column not in known:
            return f"unknown column '{column}' (allowed: {', '.join([*required, *optional])})"
    if len(set(header)) != len(header):
        return "a column appears twice in the header"
    return ""


def _shown_header(header, *, columns=12, width=40):
    """The header's columns, quoted and cut short: a wrong file's header can be a whole line of data."""
    shown = [repr(column if len(column) <= width else column[:width] + "…") for column in header[:columns]]
    if len(header) > columns:
        shown.append(f"and {len(header) - columns} more")
    return ", ".join(shown)


# --- what PostgreSQL cannot store ---------------------------------------------------


def unstorable(value):
    """Why a string cannot be stored (NUL characters, unpaired surrogates), or "" when it can.

    JSON can spell both (`\\u0000`, `\\ud800`), but PostgreSQL refuses them in text and jsonb.
    """
    if "\x00" in value:
        return "contains a NUL character (\\u0000)"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains an unpaired surrogate (an invalid \\ud800-\\udfff escape)"
    return ""


def unstorable_json(value):
    """`unstorable` for every string (keys included) inside a JSON value, plus what JSON itself cannot hold.

    NaN and Infinity (Python's json reads them, PostgreSQL's jsonb refuses them), integers too long
    to convert, and nesting deeper than MAX_JSON_DEPTH. Walks with a stack, not recursion.
    """
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_JSON_DEPTH:
            return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(item, str):
            problem = unstorable(item)
        elif isinstance(item, _LongNumber):
            problem = f"{item!r} is too long (at most {MAX_INT_DIGITS} digits)"
        elif isinstance(item, float) and not math.isfinite(item):
            problem = f"{describe(item)} is not a JSON number; write null or a string"
        else:
            problem = ""
        if problem:
            return problem
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in [*item.keys(), *item.values()])
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return ""
