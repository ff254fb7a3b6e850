"""WMT's statistics (issue 39): soft pairwise accuracy, Pairwise Difference Pearson, the tie-calibrated
pairwise accuracy grouped by item, and the SPA / acc*_eq ranking. Hand computations on tiny cases,
and on the shared human-judgement data direct transcriptions of mt-metrics-eval's published
definitions (pce.compute_pairwise_p_values / compute_one_minus_pce; tau_optimization with
TauSufficientStats.acc_23 and average_by="item", i.e. KendallWithTiesOpt), written out here in
plain loops and compared with RateLab's vectorised code."""

import json
from itertools import combinations

import numpy as np
import pytest

from analysis.stats.pairwise_accuracy import utterance_pairwise_accuracy
from analysis.stats.spa import (
    pairwise_difference_pearson,
    pairwise_p_values,
    permutation_signs,
    score_matrix,
    soft_pairwise_accuracy,
)
from analysis.stats.wmt_ranking import wmt_ranking

# Every sign pattern of two items once: an exhaustive paired permutation test.
ALL_SIGNS = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.float32)
HUMAN = np.array([[3.0, 1.0], [1.0, 2.0], [0.0, 0.0]])  # systems A, B, C x items 1, 2
METRIC = np.array([[9.0, 5.0], [1.0, 4.0], [2.0, 2.0]])


def test_pairwise_p_values_by_hand():
    # A vs B: differences (2, -1), observed sum 1; sign patterns give 1, 3, -3, -1: two of four >= 1.
    # A vs C: (3, 1), observed 4; patterns 4, 2, -2, -4: one. B vs C: (1, 2), observed 3: 3, -1, 1, -3: one.
    p = pairwise_p_values(HUMAN, ALL_SIGNS)
    assert [p[0, 1], p[0, 2], p[1, 2]] == [0.5, 0.25, 0.25]
    assert np.isnan(p[1, 0]) and np.isnan(p[0, 0])


def test_soft_pairwise_accuracy_by_hand():
    # Metric: A-B (8, 1) observed 9 -> 9, 7, -7, -9: 1/4. A-C (7, 3) observed 10 -> 1/4.
    # B-C (-1, 2) observed 1 -> 1, -3, 3, -1: 2/4. |p_H - p_M| = 0.25, 0, 0.25 -> SPA = 1 - 1/6.
    result = soft_pairwise_accuracy(HUMAN, METRIC, signs=ALL_SIGNS)
    assert result == {"spa": pytest.approx(5 / 6), "n_pairs": 3}


def test_a_missing_score_masks_the_item_for_that_pair_only():
    human = HUMAN.copy()
    human[2, 1] = np.nan  # C has no human score on item 2
    p = pairwise_p_values(human, ALL_SIGNS)
    # A vs C on item 1 alone: difference 3; patterns give 3, 3, -3, -3: two of four.
    assert p[0, 2] == 0.5
    assert p[0, 1] == 0.5  # A vs B keeps both items
    # The metric is tested on the same items as the humans.
    assert soft_pairwise_accuracy(human, METRIC, signs=ALL_SIGNS)["n_pairs"] == 3


def test_permutation_signs_are_pce_draws():
    signs = permutation_signs(7, n_perm=5, seed=4)
    uniforms = np.random.default_rng(4).random(size=(5, 7), dtype=np.float32)
    assert signs.dtype == np.float32
    assert (signs == np.where(uniforms >= 0.5, 1, -1)).all()


def test_pairwise_difference_pearson_by_hand():
    # Item 1: human (1, 2, 4), metric (1, 3, 2): differences (-1, -2), (-3, -1), (-2, 1);
    # item 2: human (1, 1), metric (0, 1): (0, -1). Both orders -> mean 0, so
    # r = sum(dh dm) / sqrt(sum dh^2 sum dm^2) = (2 + 3 - 2 + 0) / sqrt(14 * 7) = 3 / sqrt(98).
    result = pairwise_difference_pearson([1, 2, 4, 1, 1], [1, 3, 2, 0, 1], ["i1", "i1", "i1", "i2", "i2"])
    assert result == {"pdp": pytest.approx(3 / np.sqrt(98)), "n_pairs": 4}
    assert pairwise_difference_pearson([1, 2], [1, 1], ["i", "i"])["pdp"] is None  # metric without spread


def test_score_matrix_averages_duplicates_and_marks_gaps():
    matrix, systems, items = score_matrix([1, 3, 5, 2], ["s", "s", "t", "s"], ["i", "i", "i", "j"])
    assert systems.tolist() == ["s", "t"] and items.tolist() == ["i", "j"]
    assert matrix[0].tolist() == [2.0, 2.0] and matrix[1, 0] == 5.0 and np.isnan(matrix[1, 1])


def simulated(seed=0, n_systems=4, n_items=25):
    rng = np.random.default_rng(seed)
    systems = np.repeat(np.arange(n_systems), n_items)
    items = np.tile(np.arange(n_items), n_systems)
    quality = rng.normal(0, 1, n_systems)[systems] + rng.normal(0, 1, systems.size)
    human = np.clip(np.round(3 + quality), 1, 5)
    metrics = {"good": quality + rng.normal(0, 0.3, systems.size), "noise": rng.normal(size=systems.size)}
    return human, metrics, systems, items


def test_wmt_ranking_puts_the_informative_metric_in_a_better_cluster():
    human, metrics, systems, items = simulated()
    rows = wmt_ranking(human, metrics, systems, items, n_perm=200)
    assert [row["metric"] for row in rows] == ["good", "noise"]
    good, noise = rows
    assert good["spa_rank"] == 1 and good["acc_eq_rank"] == 1 and good["average_rank"] == 1.0
    assert noise["average_rank"] == 2.0
    # The table's statistics are the module's own functions.
    expected_spa = soft_pairwise_accuracy(
        score_matrix(human, systems, items)[0], score_matrix(metrics["good"], systems, items)[0]
    )["spa"]
    assert good["spa"] == pytest.approx(expected_spa)
    assert good["acc_eq"] == pytest.approx(
        utterance_pairwise_accuracy(human, {"g": metrics["good"]}, items)[0]["accuracy"]
    )


def test_wmt_ranking_keeps_indistinguishable_metrics_in_one_cluster():
    human, metrics, systems, items = simulated(seed=1)
    twin = {"good": metrics["good"], "twin": metrics["good"] + 1e-6 * np.arange(human.size)}
    rows = wmt_ranking(human, twin, systems, items, n_perm=100)
    assert {row["average_rank"] for row in rows} == {1.0}


# ---- shared data: transcriptions of mt-metrics-eval's definitions ----


def pce_p_values_transcribed(seg_scores, num_permutations=1000, seed=4):
    """pce.compute_pairwise_p_values as published: float32 signs from rint(uniform), sums."""
    rng = np.random.default_rng(seed)
    signs = rng.random(size=(num_permutations, seg_scores.shape[1]), dtype=np.float32)
    np.rint(signs, out=signs)
    signs *= 2.0
    signs -= 1.0
    seg_scores = seg_scores.astype(np.float32)
    sys_scores = np.sum(seg_scores, axis=1)
    partial = np.matmul(signs, seg_scores.T)
    p_vals = np.full((seg_scores.shape[0],) * 2, np.nan)
    for i, j in combinations(range(seg_scores.shape[0]), 2):
        p_vals[i, j] = np.sum(partial[:, i] - partial[:, j] >= sys_scores[i] - sys_scores[j]) / num_permutations
    return p_vals


def acc23_opt_transcribed(human_rows, metric_rows):
    """tau_optimization(metric, human, acc_23) with one row per item, as published: every pair in a
    row, sorted by |metric difference|, each turned into a metric tie in turn; the best average."""
    pairs, stats = [], {}
    for row, (h, m) in enumerate(zip(human_rows, metric_rows, strict=True)):
        for i, j in combinations(range(len(h)), 2):
            if h[i] == h[j] and m[i] == m[j]:
                kind = "both"
            elif h[i] == h[j]:
                kind = "human"
            elif m[i] == m[j]:
                kind = "metric"
            elif (h[i] > h[j]) == (m[i] > m[j]):
                kind = "con"
            else:
                kind = "dis"
            tie_kind = "both" if h[i] == h[j] else "metric"
            pairs.append((abs(m[i] - m[j]), row, kind, tie_kind))
            stats.setdefault(row, {"con": 0, "dis": 0, "human": 0, "metric": 0, "both": 0})[kind] += 1

    def acc(s):
        return (s["con"] + s["both"]) / sum(s.values())

    total = sum(acc(s) for s in stats.values())
    thresholds, taus = [0.0], [total / len(stats)]
    for diff, row, kind, tie_kind in sorted(pairs, key=lambda p: p[0]):
        total -= acc(stats[row])
        stats[row][kind] -= 1
        stats[row][tie_kind] += 1
        total += acc(stats[row])
        if thresholds[-1] == diff:
            taus[-1] = total / len(stats)
        else:
            thresholds.append(diff)
            taus.append(total / len(stats))
    best = int(np.nanargmax(taus))
    return taus[best], thresholds[best]


def usr_long(shared_data):
    """USR-PersonaChat as long arrays: human Overall mean per response, and as 'metrics' the means of
    the other aspects and the response length (metric-like columns on the same responses)."""
    items = json.loads((shared_data / "usr_personachat" / "pc_usr_data.json").read_text(encoding="utf-8"))
    human, systems, contexts = [], [], []
    metrics = {name: [] for name in ("Engaging", "Maintains Context", "Natural", "Uses Knowledge", "length")}
    for index, item in enumerate(items):
        for response in item["responses"]:
            human.append(float(np.mean(response["Overall"])))
            systems.append(response["model"])
            contexts.append(index)
            for name, column in metrics.items():
                value = len(response["response"].split()) if name == "length" else np.mean(response[name])
                column.append(float(value))
    return np.array(human), {k: np.array(v) for k, v in metrics.items()}, np.array(systems), np.array(contexts)


@pytest.mark.shared_data
def test_spa_reproduces_pce_on_usr_personachat(shared_data):
    human, metrics, systems, contexts = usr_long(shared_data)
    human_matrix, _, _ = score_matrix(human, systems, contexts)
    assert np.isfinite(human_matrix).all()  # every system answers every context: pce.py's own setting
    expected_human = pce_p_values_transcribed(human_matrix)
    assert np.array_equal(
        pairwise_p_values(human_matrix, permutation_signs(human_matrix.shape[1])), expected_human, equal_nan=True
    )
    for name, values in metrics.items():
        metric_matrix = score_matrix(values, systems, contexts)[0]
        expected_metric = pce_p_values_transcribed(metric_matrix)
        upper = np.triu_indices(human_matrix.shape[0], 1)
        expected = 1.0 - np.mean(np.abs(expected_human - expected_metric)[upper])
        assert soft_pairwise_accuracy(human_matrix, metric_matrix)["spa"] == pytest.approx(expected, abs=1e-12), name


@pytest.mark.shared_data
def test_tie_calibrated_accuracy_matches_kendall_with_ties_opt_by_item(shared_data):
    human, metrics, _, contexts = usr_long(shared_data)
    for name, values in metrics.items():
        rows = [np.flatnonzero(contexts == c) for c in np.unique(contexts)]
        expected, epsilon = acc23_opt_transcribed([human[r] for r in rows], [values[r] for r in rows])
        ours = utterance_pairwise_accuracy(human, {name: values}, contexts)[0]
        assert ours["accuracy"] == pytest.approx(expected, abs=1e-12), name
        assert ours["epsilon"] == pytest.approx(epsilon, abs=1e-12), name


@pytest.mark.shared_data
def test_tie_calibrated_accuracy_matches_kendall_with_ties_opt_on_grade(shared_data):
    # GRADE DailyDialog: two systems per context, so one pair per item; human = mean of 8-11 ratings,
    # metric = response length in words (many metric ties: the threshold search matters).
    judgements = json.loads((shared_data / "grade" / "human_judgement.json").read_text(encoding="utf-8"))
    human, metric, contexts = [], [], []
    for system in ("transformer_generator", "transformer_ranker"):
        folder = shared_data / "grade" / "eval_data" / "dailydialog" / system
        hypotheses = (folder / "human_hyp.txt").read_text(encoding="utf-8").rstrip("\n").split("\n")
        rows = sorted(
            (j for j in judgements if j["Dataset"] == "dailydialog_EVAL" and j["DialogModel"] == system),
            key=lambda j: j["ID"],
        )
        for line, (hypothesis, row) in enumerate(zip(hypotheses, rows, strict=True)):
            human.append(float(np.mean(json.loads(row["HumanScores"]))))
            metric.append(float(len(hypothesis.split())))
            contexts.append(line)
    human, metric, contexts = np.array(human), np.array(metric), np.array(contexts)
    rows = [np.flatnonzero(contexts == c) for c in np.unique(contexts)]
    expected, epsilon = acc23_opt_transcribed([human[r] for r in rows], [metric[r] for r in rows])
    ours = utterance_pairwise_accuracy(human, {"length": metric}, contexts)[0]
    assert ours["accuracy"] == pytest.approx(expected, abs=1e-12)
    assert ours["epsilon"] == pytest.approx(epsilon, abs=1e-12)
