"""WMT's headline meta-evaluation statistics (WMT24/25 metrics task, mt-metrics-eval): soft
pairwise accuracy at system level, Pairwise Difference Pearson at item level, and the metrics'
ranking with significance clusters. Pure: numpy only, no Django.

Scores come as (systems x items) matrices, NaN where a system has no score for an item (or as
long arrays turned into one by `score_matrix`); an "item" is a context, which every system answers.

Soft pairwise accuracy (SPA; Thompson et al. 2024, mt-metrics-eval's `pce.py`): for every pair of
systems i < j, a one-sided paired permutation test of "i is better than j" on the items both have
(the mask of the pair): each permutation swaps the two systems' scores of an item with probability
1/2 and compares the difference of the sums; p = share of the permutations whose difference is at
least the observed one (pce.py's count: the observed arrangement is not added). This is done on
the human scores and on the metric's, with the *same* sign matrix (1,000 permutations, fixed seed
4, drawn as pce.py draws it: float32 uniforms rounded to 0/1), and SPA = 1 - mean |p_H - p_M| over
the pairs. A metric that is as confident as the humans about every pair scores 1.

Pairwise Difference Pearson (PDP; DiIanni & Deutsch, EMNLP 2025): Pearson's r between the human
and the metric score differences of every two responses to the same item, pooled over items. Both
orders of each pair are used, so the result does not depend on which response is called first.

The metrics' ranking by these statistics (WMT24/25) is `analysis.stats.wmt_ranking`.
"""

from itertools import combinations

import numpy as np

from analysis.stats.pairwise_accuracy import pairs_within_groups

PCE_SEED = 4  # mt-metrics-eval's pce.compute_pairwise_p_values default
N_PERMUTATIONS = 1000


def score_matrix(values, systems, items):
    """`(matrix, system_labels, item_labels)`: the mean score of each (system, item), NaN where
    none; labels sorted."""
    values = np.asarray(values, dtype=float)
    system_labels, system_index = np.unique(np.asarray(systems), return_inverse=True)
    item_labels, item_index = np.unique(np.asarray(items), return_inverse=True)
    keep = np.isfinite(values)
    shape = (system_labels.size, item_labels.size)
    sums, counts = np.zeros(shape), np.zeros(shape)
    np.add.at(sums, (system_index[keep], item_index[keep]), values[keep])
    np.add.at(counts, (system_index[keep], item_index[keep]), 1)
    with np.errstate(invalid="ignore"):
        return sums / np.where(counts > 0, counts, np.nan), system_labels, item_labels


def permutation_signs(n_items, n_perm=N_PERMUTATIONS, seed=PCE_SEED):
    """`(n_perm, n_items)` float32 of +1/-1, drawn as pce.py draws them (so, with complete data,
    `pairwise_p_values` reproduces its p-values exactly)."""
    uniforms = np.random.default_rng(seed).random(size=(n_perm, n_items), dtype=np.float32)
    return np.rint(uniforms) * np.float32(2.0) - np.float32(1.0)


def pairwise_p_values(scores, signs):
    """`(S, S)` with the upper triangle filled: p-value of "system i is better than system j"
    (sums over the items both systems have); NaN where they share no item."""
    scores = np.asarray(scores, dtype=float)
    n = scores.shape[0]
    p_values = np.full((n, n), np.nan)
    defined = np.isfinite(scores)
    if defined.all():
        # pce.py's arithmetic: float32 sums and one product for all systems.
        matrix = scores.astype(np.float32)
        totals, partial = matrix.sum(axis=1), signs @ matrix.T
        for i, j in combinations(range(n), 2):
            p_values[i, j] = np.mean(partial[:, i] - partial[:, j] >= totals[i] - totals[j])
        return p_values
    for i, j in combinations(range(n), 2):
        mask = defined[i] & defined[j]
        if not mask.any():
            continue
        pair = np.where(mask, scores[[i, j]], 0.0).astype(np.float32)
        totals, partial = pair.sum(axis=1), signs @ pair.T
        p_values[i, j] = np.mean(partial[:, 0] - partial[:, 1] >= totals[0] - totals[1])
    return p_values


def soft_pairwise_accuracy(human, metric, *, n_perm=N_PERMUTATIONS, seed=PCE_SEED, signs=None):
    """{"spa", "n_pairs"}: 1 - mean |p_H - p_M| over system pairs; both tested on the items
    where the humans and the metric score both systems."""
    human, metric = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    shared = np.isfinite(human) & np.isfinite(metric)
    human, metric = np.where(shared, human, np.nan), np.where(shared, metric, np.nan)
    signs = permutation_signs(human.shape[1], n_perm, seed) if signs is None else signs
    p_human, p_metric = pairwise_p_values(human, signs), pairwise_p_values(metric, signs)
    gaps = np.abs(p_human - p_metric)[np.triu_indices(human.shape[0], 1)]
    gaps = gaps[np.isfinite(gaps)]
    return {"spa": float(1.0 - gaps.mean()) if gaps.size else None, "n_pairs": int(gaps.size)}


def pairwise_difference_pearson(human, metric, items):
    """{"pdp", "n_pairs"}: r between human and metric differences of responses to the same item
    (long arrays: one entry per response); None with fewer than two pairs or no spread."""
    human, metric = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    keep = np.flatnonzero(np.isfinite(human) & np.isfinite(metric))
    first, second, _ = pairs_within_groups(np.asarray(items)[keep])
    first, second = keep[first], keep[second]
    human_gaps = np.concatenate([human[first] - human[second], human[second] - human[first]])
    metric_gaps = np.concatenate([metric[first] - metric[second], metric[second] - metric[first]])
    if first.size < 2 or np.ptp(human_gaps) == 0 or np.ptp(metric_gaps) == 0:
        return {"pdp": None, "n_pairs": int(first.size)}
    return {"pdp": float(np.corrcoef(human_gaps, metric_gaps)[0, 1]), "n_pairs": int(first.size)}
