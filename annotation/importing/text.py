"""Turning an uploaded or named file into lines or rows, with errors that say where."""

import csv
import io
import json
from pathlib import Path

from annotation.importing.errors import DataImportError

FORMATS = ("jsonl", "csv")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


def read_bytes(file):
    """The raw content of `file`: a path, bytes, or an open (binary or text) file object."""
    if isinstance(file, (str, Path)):
        try:
            return Path(file).read_bytes()
        except OSError as exc:
            raise DataImportError(f"cannot read {file}: {exc.strerror}") from None
    if isinstance(file, bytes):
        return file
    data = file.read()
    return data.encode("utf-8") if isinstance(data, str) else data


def decode(data):
    """UTF-8 text of `data` (a leading byte-order mark is dropped); refuses other encodings and empty files."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataImportError(
            f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8",
            line=line,
        ) from None
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


def iter_jsonl(text):
    """Yield `(line_number, object)` for every non-blank line; each must be a JSON object."""
    # Split on "\n" only: str.splitlines() also breaks at U+2028 and form feeds, which JSON
    # strings may hold verbatim (export writes them so).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataImportError(f"broken JSON: {exc.msg} (column {exc.colno})", line=number) from None
        if not isinstance(value, dict):
            raise DataImportError(f"expected a JSON object, found {type(value).__name__}", line=number)
        yield number, value


def iter_csv(text, *, required, optional=()):
    """Yield `(row_number, {column: value})`; the header is row 1. Columns are checked against the lists."""
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [column.strip() for column in next(reader)]
    except csv.Error as exc:
        raise DataImportError(f"broken CSV: {exc}", line=1, unit="row") from None
    for column in required:
        if column not in header:
            raise DataImportError(f"missing column '{column}' in the header", line=1, unit="row")
    known = set(required) | set(optional)
    for column in header:
        if column not in known:
            allowed = ", ".join([*required, *optional])
            raise DataImportError(f"unknown column '{column}' (allowed: {allowed})", line=1, unit="row")
    if len(set(header)) != len(header):
        raise DataImportError("a column appears twice in the header", line=1, unit="row")
    number = 1
    try:
        for values in reader:
            number += 1
            if not values or not any(value.strip() for value in values):
                continue
            if len(values) != len(header):
                raise DataImportError(f"expected {len(header)} fields, found {len(values)}", line=number, unit="row")
            yield number, dict(zip(header, values, strict=True))
    except csv.Error as exc:
        raise DataImportError(f"broken CSV: {exc}", line=number + 1, unit="row") from None


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
    """`unstorable` for every string (keys included) inside a JSON value."""
    if isinstance(value, str):
        return unstorable(value)
    if isinstance(value, dict):
        items = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return ""
    for item in items:
        problem = unstorable_json(item)
        if problem:
            return problem
    return ""
