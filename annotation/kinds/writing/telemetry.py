"""The writing telemetry a task page sends with each written reply (`telemetry-<item>`), checked.

The page script (static/annotation/kinds/writing/telemetry.js) counts, per reply box, from the moment
the task page is shown (never on the start page): the fields of `integrity.writing_flags`, plus
`restored_chars`, the characters already in the box when the page opened (kept in this browser or
by the server from an earlier visit), which no key or paste of this visit explains.

What arrives is a client's say-so: a JSON object of whole numbers within bounds, nothing else. A page
without script sends nothing (stored as None: not recorded, which is not "clean"); anything else that
is not such an object refuses the submission, as a malformed answer does.
"""

import json

from annotation.kinds.base import SubmissionRefused
from annotation.quality.integrity.writing_flags import TELEMETRY_FIELDS

DAY_MS = 24 * 3600 * 1000
MAX_COUNT = 1_000_000  # keys, characters or events in one reply: far beyond a 2,000-character reply
RAW_MAX_CHARS = 2000  # the JSON text itself
# Each field's bound: times in milliseconds up to a day (an assignment expires long before).
BOUNDS = {name: (DAY_MS if name.endswith("_ms") else MAX_COUNT) for name in (*TELEMETRY_FIELDS, "restored_chars")}
FIELDS = tuple(BOUNDS)


def _refused(number, why):
    return SubmissionRefused(
        f"The writing record sent with reply {number} is not one this page makes ({why}): reload the page "
        "and submit again."
    )


def telemetry_of(raw, number):
    """The checked telemetry of reply `number` (a dict of ints), or None when none was sent."""
    if raw is None or not str(raw).strip():
        return None
    raw = str(raw)
    if len(raw) > RAW_MAX_CHARS:
        raise _refused(number, "too long")
    try:
        value = json.loads(raw)
    except ValueError:
        raise _refused(number, "not JSON") from None
    if not isinstance(value, dict):
        raise _refused(number, "not an object")
    unknown = sorted(set(value) - set(BOUNDS))
    if unknown:
        # Named by count only: the keys are of the client's making.
        raise _refused(number, f"{len(unknown)} unknown field{'s' if len(unknown) != 1 else ''}")
    checked = {}
    for name, number_value in value.items():
        if isinstance(number_value, bool) or not isinstance(number_value, int):
            raise _refused(number, f"{name} is not a whole number")
        if not 0 <= number_value <= BOUNDS[name]:
            raise _refused(number, f"{name} is out of bounds")
        checked[name] = number_value
    return checked
