"""The pairwise section's metric table, computed in arrays, against a judgement-by-judgement count.

The table is computed once per set of kept annotators by the filter-sensitivity audit, so it works
on arrays; these cases hold it to the plain definition: judgements with the reference on one side
left out, a judgement counted when the metric scored both replies, and a system's mean taken over
its distinct judged replies (a reply judged three times counts once).
"""

import json

import numpy as np
import pytest
from scipy import stats

from analysis.sections.pairwise import OUTCOME, metric_table
from analysis.stats.pairwise import tie_calibrated_accuracy
from annotation.models import REFERENCE_SYSTEM_NAME

SYSTEMS = ["alpha", "beta", "gamma", REFERENCE_SYSTEM_NAME]
STRENGTHS = [0.3, -0.1, -0.5, 0.3]


def _rows():
    # (context, system a, system b, response a, response b, winner, annotator, position known)
    return [
        (1, "alpha", "beta", 11, 12, "a", 1, True),
        (1, "alpha", "beta", 11, 12, "a", 2, True),  # the same pair judged again: reply 11 counts once
        (1, "beta", "alpha", 12, 11, "tie", 3, True),
        (2, "gamma", "alpha", 23, 21, "b", 1, True),
        (2, "beta", "gamma", 22, 23, "a", 2, True),
        (3, "alpha", REFERENCE_SYSTEM_NAME, 31, 99, "b", 1, True),  # the reference: left out
        (3, "gamma", "beta", 33, 32, "tie", 3, True),
    ]


SCORES = {
    "full": {11: 0.9, 12: 0.4, 21: 0.7, 22: 0.5, 23: 0.1, 31: 0.8, 32: 0.5, 33: 0.5},
    "partial": {11: 1.0, 12: 0.0, 21: None, 22: 2.0, 23: 2.0, 33: 1.0},  # 21 unscored, 32 missing
    "none_judged": {99: 1.0},
}


def _by_hand(rows, scores):
    rows = [row for row in rows if REFERENCE_SYSTEM_NAME not in (row[1], row[2])]
    expected = {}
    for metric, values in scores.items():
        pairs = [(values[r[3]], values[r[4]], OUTCOME[r[5]]) for r in rows if values.get(r[3]) is not None
                 and values.get(r[4]) is not None]  # fmt: skip
        if not pairs:
            continue
        accuracy, epsilon = tie_calibrated_accuracy(*(list(column) for column in zip(*pairs, strict=True)))
        replies = {}
        for r in rows:
            for response, system in ((r[3], r[1]), (r[4], r[2])):
                if values.get(response) is not None:
                    replies.setdefault(system, {})[response] = values[response]
        means = [np.mean(list(replies[s].values())) if s in replies else np.nan for s in SYSTEMS]
        keep = np.isfinite(means)
        tau = stats.kendalltau(np.array(means)[keep], np.array(STRENGTHS)[keep]).statistic
        expected[metric] = (accuracy, len(pairs), None if not np.isfinite(tau) else tau, epsilon)
    return expected


def test_the_metric_table_equals_a_judgement_by_judgement_count():
    table, epsilons = metric_table(_rows(), SYSTEMS, STRENGTHS, SCORES)
    expected = _by_hand(_rows(), SCORES)
    assert {entry["metric"] for entry in table} == set(expected) == {"full", "partial"}
    for entry in table:
        accuracy, n_pairs, tau, epsilon = expected[entry["metric"]]
        assert entry["pairwise_accuracy"] == pytest.approx(accuracy, abs=1e-12)
        assert entry["n_pairs"] == n_pairs and type(entry["n_pairs"]) is int
        assert (entry["kendall_vs_bt"] is None) == (tau is None)
        assert entry["kendall_vs_bt"] == pytest.approx(tau, abs=1e-12) if tau is not None else True
        assert epsilons[entry["metric"]] == epsilon
    assert expected["full"][1] == 6 and expected["partial"][1] == 4
    json.dumps(table)  # stored in the report's JSON


def test_a_table_of_reference_judgements_only_is_empty():
    rows = [row for row in _rows() if REFERENCE_SYSTEM_NAME in (row[1], row[2])]
    assert metric_table(rows, SYSTEMS, STRENGTHS, SCORES) == ([], {})
