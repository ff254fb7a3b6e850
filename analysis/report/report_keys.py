"""How a cached report is keyed: its normalised filters and their hash.

A module of its own, free of numpy and scipy, so that pages loaded at start-up (the survey page's
planning panel) can find a report without importing the statistics.
"""

import hashlib
import json


def report_params(*, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None, options=None):
    """The normalised filter set a report is keyed by; `options` (analysis.report.options) only
    where some differ from their defaults, so a report without them keeps its former key."""
    params = {
        "aspect": aspect or "overall",
        "systems": sorted(systems) if systems else None,
        "apply_exclusions": bool(apply_exclusions),
        "learned_metric": learned_metric or None,
    }
    if options:
        params["options"] = dict(sorted(options.items()))
    return params


def params_hash(params):
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()
