"""CSV cells that a spreadsheet cannot run as formulas, and the exact undo for RateLab's own import.

Writing follows OWASP's rule through defusedcsv: a cell that starts with `=`, `+`, `-`, `@`
(defusedcsv adds `|` and `%`) gets a leading `'`, and its `|` become `\\|` (a DDE separator),
unless the cell is a plain number such as `-3`. defusedcsv leaves two gaps that this module
closes before handing a row over:

- OWASP also names TAB and CR as first characters; defusedcsv does not. They are escaped the
  same way here.
- Text that really starts with `'` followed by something that looks escaped (`'=x`, `''=`)
  would lose its quote on import. Such text gets one more `'`, so `neutralise` is one-to-one
  and `restore(neutralise(s)) == s` for every string.

Import calls `restore` on every CSV cell. Pure Python, no Django: analysis's CSV exports can use
`writer` too.
"""

import re

from defusedcsv import csv as defused

# defusedcsv's triggers, plus OWASP's TAB and CR.
FORMULA_STARTS = ("=", "+", "-", "@", "|", "%", "\t", "\r")
# defusedcsv does not escape plain numbers ("-3", "-1,234.5"): a spreadsheet reads them as numbers.
_PLAIN_NUMBER = re.compile(r"^-?[0-9,\.]+$")


def _formula_like(text):
    return text[:1] in FORMULA_STARTS and not _PLAIN_NUMBER.match(text)


def _escaped(text):
    return "'" + text.replace("|", "\\|")


def restore(cell):
    """The text a neutralised cell stood for; a cell RateLab would not have escaped is returned as is."""
    if not cell.startswith("'"):
        return cell
    original = cell[1:].replace("\\|", "|")
    if _formula_like(original) or original.startswith("'"):
        return original
    return cell


def _fill_gaps(value):
    """Escape what defusedcsv leaves as is but must be escaped: TAB/CR starts and look-alike quotes."""
    if not isinstance(value, str):
        return value
    if value[:1] in ("\t", "\r") or (value.startswith("'") and restore(value) != value):
        return _escaped(value)
    return value


def neutralise(value):
    """One cell as `writer` writes it: anything a spreadsheet could run (or `restore` would alter) escaped."""
    if isinstance(value, str) and _formula_like(value):
        return _escaped(value)
    return _fill_gaps(value)


class _Writer:
    """csv.writer's interface over defusedcsv's writer, with its two gaps filled first."""

    def __init__(self, writer):
        self._writer = writer

    def writerow(self, row):
        # Our escapes start with "'", which defusedcsv leaves alone; the rest is defusedcsv's rule.
        return self._writer.writerow([_fill_gaps(cell) for cell in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def writer(stream):
    """A CSV writer for `stream` whose cells cannot start a formula in Excel, LibreOffice or Sheets.

    Rows end in CRLF (RFC 4180, the csv module's default) on purpose: Python quotes a cell that
    holds a character of the line terminator, so with a bare "\n" terminator a lone "\r" in a
    text went out unquoted and split the row on the way back in.
    """
    return _Writer(defused.writer(stream))
