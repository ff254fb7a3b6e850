"""Reading import files: decoding, parsing and validation, with no database access.

Services in annotation/services/imports.py check the parsed records against the database
and write them. Every problem is a DataImportError whose message names the line (or CSV
row) and the field; a file with several problems raises ImportErrors, which lists them.
"""

from annotation.importing.datasets import ParsedContext, ParsedResponse, parse_dataset
from annotation.importing.errors import MAX_REPORTED, DataImportError, ErrorCollector, ImportErrors
from annotation.importing.ratings import DEFAULT_ASPECT, ParsedRating, parse_ratings
from annotation.importing.text import FORMATS, decode, detect_format, read_bytes, read_lines

__all__ = [
    "DEFAULT_ASPECT",
    "FORMATS",
    "MAX_REPORTED",
    "DataImportError",
    "ErrorCollector",
    "ImportErrors",
    "ParsedContext",
    "ParsedRating",
    "ParsedResponse",
    "decode",
    "detect_format",
    "parse_dataset",
    "parse_ratings",
    "read_bytes",
    "read_lines",
]
