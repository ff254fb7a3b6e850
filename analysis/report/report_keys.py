"""How a cached report is keyed: its normalised filters and their hash.

A module of its own, free of numpy and scipy, so that pages loaded at start-up (the survey page's
planning panel) can find a report without importing the statistics.
"""

import hashlib
import json


def report_params(*, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None):
    """The normalised filter set a report is keyed by."""
    return {
        "aspect": aspect or "overall",
        "systems": sorted(systems) if systems else None,
        "apply_exclusions": bool(apply_exclusions),
        "learned_metric": learned_metric or None,
    }


def params_hash(params):
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()
