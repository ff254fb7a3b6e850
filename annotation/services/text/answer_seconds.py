"""The time an annotator spent on an item, as the task page reports it (`seconds-<item>`).

Read from a submission and from a kept draft alike, by one rule: a number of seconds from 0 to a
day, anything else unknown (a clock jump or an edited form is no reason to refuse the answers).
"""

import math

MAX_SECONDS = 24 * 3600


def seconds_or_none(value):
    """`value` as seconds (a float), or None when it is not a number of seconds in range."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and 0 <= seconds <= MAX_SECONDS else None
