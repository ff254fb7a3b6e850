"""The meta-evaluation statistics on real human judgements (USR-PersonaChat, GRADE DailyDialog),
checked against scipy and direct loops; the figures are the ones docs/analysis.md states."""

from collections import defaultdict

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis import stats
from analysis.stats.pairwise_accuracy import utterance_pairwise_accuracy
from analysis.stats.permutation import permutation_tests, significance_clusters
from tests.analysis.conftest import simple_metrics
from tests.analysis.test_metaeval_stats import brute_force_acc_eq
from tests.shared_loaders import grade, usr_personachat

pytestmark = pytest.mark.shared_data


def vectors(records, ratings):
    """Human mean per response, the test's simple metrics, and each response's system and context."""
    scores = defaultdict(list)
    for rating in ratings:
        scores[(rating["context_id"], rating["system"])].append(rating["score"])
    human, systems, contexts, metrics = [], [], [], defaultdict(list)
    for index, record in enumerate(records):
        for response in record["responses"]:
            human.append(np.mean(scores[(record["context_id"], response["system"])]))
            systems.append(response["system"])
            contexts.append(index)
            for name, value in simple_metrics(response["text"], record["references"][0]).items():
                metrics[name].append(value)
    return (
        np.array(human),
        {k: np.array(v) for k, v in metrics.items()},
        np.array(systems, dtype=object),
        np.array(contexts),
    )


@pytest.fixture
def usr(shared_data):
    return vectors(*usr_personachat(shared_data))


@pytest.fixture
def grade_dd(shared_data):
    return vectors(*grade(shared_data, "dailydialog"))


def test_kendall_on_usr_and_grade_equals_scipy(usr, grade_dd):
    for human, metrics, _, _ in (usr, grade_dd):
        for row in stats.utterance_level(human, metrics, n_boot=0):
            expected = scipy_stats.kendalltau(human, metrics[row["metric"]])
            assert (row["kendall"], row["kendall_p"]) == pytest.approx((expected.statistic, expected.pvalue))
    human, metrics, _, _ = usr
    row = next(r for r in stats.utterance_level(human, metrics, n_boot=0) if r["metric"] == "overlap_f1")
    assert row["kendall"] == pytest.approx(0.1941, abs=5e-4)


def test_usr_pairwise_accuracy_within_contexts_equals_the_brute_force_search(usr):
    human, metrics, _, contexts = usr
    rows = {row["metric"]: row for row in utterance_pairwise_accuracy(human, metrics, contexts)}
    for name in ("length", "overlap_f1"):
        row = rows[name]
        assert row["accuracy"] == pytest.approx(brute_force_acc_eq(human, metrics[name], contexts, row["epsilon"]))
        assert row["accuracy_untied"] == pytest.approx(brute_force_acc_eq(human, metrics[name], contexts, 0.0))
        assert row["n_pairs"] == 600 and row["n_contexts"] == 60  # 60 contexts x C(5, 2) pairs
    assert rows["overlap_f1"]["accuracy"] == pytest.approx(0.5483, abs=5e-4)
    assert rows["overlap_f1_nostop"]["epsilon"] > 0  # a small threshold helps this one
    assert rows["overlap_f1_nostop"]["accuracy"] > rows["overlap_f1_nostop"]["accuracy_untied"]


def test_usr_system_level_boot_both_interval_agrees_with_its_p_value(usr):
    human, metrics, systems, contexts = usr
    result = stats.system_level(human, metrics, systems, contexts=contexts, n_boot=1000, seed=0)
    for row in result["correlations"]:
        for kind in ("pearson", "spearman", "kendall"):
            low, high, p = row[f"{kind}_ci_low"], row[f"{kind}_ci_high"], row[f"{kind}_p_bootboth"]
            assert (p < 0.05) == (low > 0 or high < 0)
    overlap = next(row for row in result["correlations"] if row["metric"] == "overlap_f1")
    assert overlap["n"] == 5
    assert overlap["pearson_ci_high"] - overlap["pearson_ci_low"] > 0.5  # five systems cannot tell much


@pytest.mark.parametrize(
    ("corpus", "expected"),
    [
        ("usr", {"overlap_f1_nostop": 1, "overlap_f1": 2, "length": 2}),
        ("grade_dd", {"overlap_f1_nostop": 1, "overlap_f1": 2, "length": 3}),
    ],
)
def test_clusters_on_real_data_follow_the_permutation_tests(request, corpus, expected):
    human, metrics, _, _ = request.getfixturevalue(corpus)
    tests = permutation_tests(human, metrics, n_perm=1000, seed=0)
    correlations = {row["metric"]: row["pearson"] for row in stats.utterance_level(human, metrics, n_boot=0)}
    assert significance_clusters(correlations, tests) == expected
    p = {(row["a"], row["b"]): row["p"] for row in tests}
    assert p[("overlap_f1_nostop", "overlap_f1")] < 0.05  # the split between clusters 1 and 2
