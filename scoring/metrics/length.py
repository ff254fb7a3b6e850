"""Length statistics in whitespace tokens: response_len, reference_len (mean over references), length_diff."""

import numpy as np

from scoring.metrics.registry import Metric, describe_family, register


def _family(batch, names):
    response = np.array([len(h.split()) for h in batch.hyps], dtype=float)
    reference = np.array([np.mean([len(r.split()) for r in rs]) for rs in batch.refs], dtype=float)
    return {"response_len": response, "reference_len": reference, "length_diff": response - reference}


for _name, _description in (
    ("response_len", "Response length in whitespace tokens."),
    ("reference_len", "Reference length in whitespace tokens (mean over references)."),
    ("length_diff", "response_len - reference_len."),
):
    register(Metric(_name, "1", _family, {"tokens": "whitespace"}, _description, forks_cheaply=True))
describe_family(_family, "lengths")
