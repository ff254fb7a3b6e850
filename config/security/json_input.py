"""JSON from outside (request bodies, import lines), parsed without crashing on hostile input.

Python's parser recurses once per level of nesting: `[` repeated 100,000 times raises RecursionError,
which is no ValueError, so a view that caught only ValueError answered 500. Every place that parses
JSON a client sent (the Prolific webhook, the scoring API, import files) goes through `json_loads`,
which turns each failure into a ValueError with a short reason and, for request bodies, refuses
nesting deeper than any real payload has.
"""

import json

# Deeper JSON is refused: Python's parser and PostgreSQL's jsonb give up somewhere above this, with a
# RecursionError or a raw database error, and no real payload or meta needs it.
MAX_JSON_DEPTH = 64


def json_loads(data, *, max_depth=MAX_JSON_DEPTH, parse_int=None):
    """The JSON value of `data` (str, or UTF-8 bytes); ValueError with a short reason for broken JSON,
    bytes that are not UTF-8, or nesting deeper than `max_depth` (None: only what the parser itself
    cannot take, for callers that name the too-deep field themselves)."""
    try:
        value = json.loads(data, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise ValueError(f"broken JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError:
        raise ValueError("the body is not UTF-8") from None
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if max_depth is not None and json_depth(value, limit=max_depth) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return value


def json_depth(value, *, limit=None):
    """How deeply lists and objects nest in `value` (a scalar: 0); walks with a stack, not recursion,
    and stops once past `limit`."""
    deepest = 0
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if limit is not None and deepest > limit:
            return deepest
        pending.extend((child, depth + 1) for child in children)
    return deepest
