"""What is wrong with an import file: one problem (DataImportError) or several (ImportErrors).

A parser does not stop at the first bad line: it collects each line's problem in an
ErrorCollector and goes on, so a researcher fixes a file in one round instead of one round per
line. Nothing is written while any problem is known.
"""

# The first problems (by line) are listed in full; the rest are only counted. A whole file of
# bad lines would otherwise become a message of a million lines.
MAX_REPORTED = 50
NOTHING_IMPORTED = "Nothing was imported."


class DataImportError(Exception):
    """An import file is wrong. The message names the line (or CSV row) and the field.

    Raised before anything is written, so a caller can show the message as it is: the
    commands print `report_lines()` and exit non-zero; the upload forms list them beside the
    file field.
    """

    def __init__(self, message, *, line=None, field=None, unit="line"):
        self.detail = message
        self.line = line
        self.field = field
        self.unit = unit
        where = []
        if line is not None:
            where.append(f"{unit} {line}")
        if field:
            where.append(f"field '{field}'")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)

    @property
    def errors(self):
        return [self]

    def report_lines(self):
        """The message as lines, ending in the promise that nothing was written."""
        return [f"{self}. {NOTHING_IMPORTED}"]


class ImportErrors(DataImportError):
    """Several problems in one file: the first MAX_REPORTED of them by line, and how many in all.

    `line`, `field` and `unit` are the first problem's, so code that looks at one error still works.
    """

    def __init__(self, errors, total):
        first = errors[0]
        self._errors = list(errors)
        self.total = total
        super().__init__(first.detail, line=first.line, field=first.field, unit=first.unit)
        self.args = ("\n".join(self._lines()),)

    @property
    def errors(self):
        return list(self._errors)

    def _lines(self):
        lines = [str(error) for error in self._errors]
        hidden = self.total - len(self._errors)
        if hidden:
            lines.append(f"… and {hidden} more error{'s' if hidden != 1 else ''}")
        return lines

    def report_lines(self):
        return [f"{self.total} errors in the file. {NOTHING_IMPORTED}", *self._lines()]


def _position(error):
    # File-wide problems (no line) come first, then by line; equal lines keep their order.
    return -1 if error.line is None else error.line


class ErrorCollector:
    """Problems found while reading a file, kept up to `cap` (the earliest lines), counted beyond."""

    def __init__(self, cap=MAX_REPORTED):
        self.cap = cap
        self.total = 0
        self._kept = []

    def __bool__(self):
        return self.total > 0

    def add(self, error):
        kept = error.errors
        self.total += getattr(error, "total", len(kept))
        self._kept.extend(kept)
        if len(self._kept) > 2 * self.cap:
            self._trim()

    def _trim(self):
        self._kept.sort(key=_position)
        del self._kept[self.cap :]

    def raise_if_any(self):
        """Raise what was found: the error itself when there is one, ImportErrors when there are more."""
        if not self.total:
            return
        self._trim()
        if self.total == 1:
            raise self._kept[0]
        raise ImportErrors(self._kept, self.total)


def parse_records(lines, fmt, errors, *, parse_csv, parse_jsonl, noun):
    """The reading both import formats share: `parse_csv` or `parse_jsonl` (lines, collector, records)
    appends each valid record; a bad line goes to `errors` (an ErrorCollector) and the reading goes on,
    and without a collector every problem is raised together at the end. A file without a record
    says so ("the file holds no `noun`" for a CSV, "the file is empty" for JSONL)."""
    collector = ErrorCollector() if errors is None else errors
    records = []
    try:
        (parse_csv if fmt == "csv" else parse_jsonl)(lines, collector, records)
    except DataImportError as fatal:  # the file cannot be read on (encoding, size, CSV header)
        collector.add(fatal)
    if not records and not collector:
        collector.add(DataImportError(f"the file holds no {noun}" if fmt == "csv" else "the file is empty"))
    if errors is None:
        collector.raise_if_any()
    return records
