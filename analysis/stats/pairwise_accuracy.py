"""Pairwise accuracy of metrics against humans.

System level (Kocmi et al. 2021): over every pair of systems, the share of pairs that the metric
orders as the humans' mean scores do (a pair both tie counts as agreement).

Response level, within each context ("which of two responses to the same context is better"),
with ties handled as in Deutsch et al. 2023 ("Ties matter"): humans often give two responses the
same mean score, and a metric almost never does, so plain accuracy punishes every metric for each
human tie. Their acc_eq counts a pair correct when the metric ties it and the humans tie it, or
both order it the same way; a metric "ties" a pair when its scores differ by at most a threshold
epsilon, and tie calibration picks the epsilon that maximises acc_eq. Accuracy is averaged over
contexts (each context weighs equally: their "group by item"), the threshold is one for all
contexts. Calibration is done on the same data it is reported on, so the calibrated figure is an
upper bound for a fresh study; the untied (epsilon = 0) figure is reported beside it.
"""

from itertools import combinations

import numpy as np

HUMAN_TIE = 1e-9  # two mean human scores closer than this are a tie (floating-point noise only)


def _sign(values):
    return np.sign(np.where(np.abs(values) <= HUMAN_TIE, 0.0, values))


def system_pairwise_accuracy(human_means, metric_means):
    """{"accuracy", "n_pairs", "n_agree"} over all pairs of systems where both means are defined."""
    human_means = np.asarray(human_means, dtype=float)
    metric_means = np.asarray(metric_means, dtype=float)
    defined = np.flatnonzero(np.isfinite(human_means) & np.isfinite(metric_means))
    pairs = list(combinations(defined, 2))
    if not pairs:
        return {"accuracy": None, "n_pairs": 0, "n_agree": 0}
    first, second = np.array(pairs).T
    agree = _sign(human_means[first] - human_means[second]) == np.sign(metric_means[first] - metric_means[second])
    return {"accuracy": float(agree.mean()), "n_pairs": len(pairs), "n_agree": int(agree.sum())}


def pairs_within_groups(groups):
    """(first, second, group) index arrays of every pair of items that share a group label."""
    groups = np.asarray(groups)
    _, codes = np.unique(groups.astype(str) if groups.dtype == object else groups, return_inverse=True)
    codes = codes.ravel()
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    firsts, seconds, labels = [], [], []
    for size in np.unique(sizes[sizes >= 2]):
        # Every group of this size at once: the size's pair pattern, offset by each group's start.
        chosen = np.flatnonzero(sizes == size)
        i, j = np.triu_indices(size, 1)
        base = starts[chosen][:, None]
        firsts.append(order[(base + i).ravel()])
        seconds.append(order[(base + j).ravel()])
        labels.append(np.repeat(chosen, i.size))
    if not firsts:
        empty = np.array([], dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(labels)


def tie_calibration(human_diff, metric_diff, weights):
    """(best acc_eq, its epsilon, acc_eq at epsilon 0) for pairs with these differences.

    acc_eq(eps) = sum of weights of pairs where (|metric diff| <= eps and humans tie) or
    (|metric diff| > eps and the signs agree). Candidates are 0 and every |metric diff|; sorted
    by |metric diff|, moving the threshold past a pair swaps its "signs agree" term for its
    "humans tie" term, so every candidate is one cumulative sum. A tie between the best
    candidates keeps the smallest epsilon.
    """
    human_sign = _sign(human_diff)
    distance = np.abs(metric_diff)
    human_tie = (human_sign == 0).astype(float) * weights
    signs_agree = (human_sign == np.sign(metric_diff)).astype(float) * weights
    order = np.argsort(distance, kind="stable")
    ordered = distance[order]
    gain = np.cumsum(human_tie[order] - signs_agree[order])
    base = signs_agree.sum()
    last_of_run = np.r_[ordered[1:] != ordered[:-1], True]
    candidates = base + gain[last_of_run]
    thresholds = ordered[last_of_run]
    # Pairs the metric scores exactly equal are ties at epsilon 0 already; their two terms agree.
    at_zero = base
    best = int(np.argmax(candidates))
    if at_zero >= candidates[best]:
        return float(at_zero), 0.0, float(at_zero)
    return float(candidates[best]), float(thresholds[best]), float(at_zero)


def utterance_pairwise_accuracy(human, metrics, contexts):
    """Per metric: tie-calibrated accuracy within contexts, its threshold, the untied accuracy,
    and how many pairs and contexts it rests on (pairs where human and metric are defined)."""
    human = np.asarray(human, dtype=float)
    first, second, group = pairs_within_groups(contexts)
    rows = []
    for name, column in metrics.items():
        values = np.asarray(column, dtype=float)
        keep = np.isfinite(human[first]) & np.isfinite(human[second])
        keep &= np.isfinite(values[first]) & np.isfinite(values[second])
        row = {"metric": name, "n_pairs": int(keep.sum()), "n_contexts": 0, "human_ties": 0}
        row |= {"accuracy": None, "accuracy_untied": None, "epsilon": None}
        if keep.any():
            a, b, g = first[keep], second[keep], group[keep]
            _, g = np.unique(g, return_inverse=True)
            per_group = np.bincount(g)
            weights = 1.0 / (per_group[g] * per_group.size)  # each context weighs 1 / n_contexts
            human_diff = human[a] - human[b]
            best, epsilon, untied = tie_calibration(human_diff, values[a] - values[b], weights)
            row.update(
                n_contexts=int(per_group.size),
                human_ties=int((_sign(human_diff) == 0).sum()),
                accuracy=best,
                accuracy_untied=untied,
                epsilon=epsilon,
            )
        rows.append(row)
    return rows
