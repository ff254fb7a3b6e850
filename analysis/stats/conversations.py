"""Statistics of conversation studies (issue 37): numpy and scipy only, no Django.

- `group_means`: each group's (system's) mean with a percentile-bootstrap CI over its items
  (conversations), and the resampled means themselves for the tests below;
- `mean_difference_tests` + `analysis.stats.permutation.significance_clusters`: systems ranked by
  mean and grouped into clusters the data cannot tell apart, as the metrics' ranking is;
- `proportions`: flag rates with Wilson intervals (`analysis.stats.pairwise.wilson`);
- `worst_and_mean`: a conversation's mean and worst per-turn score, for their correlation with
  its overall score.
"""

import numpy as np

from analysis.stats.pairwise import wilson
from analysis.stats.permutation import significance_clusters

CONFIDENCE = 0.95
ALPHA = 0.05


def _float(value):
    value = float(value)
    return value if np.isfinite(value) else None


def group_means(values, groups, *, n_boot=1000, seed=0, level=CONFIDENCE):
    """`(rows, samples)`: one row `{"group", "mean", "ci_low", "ci_high", "n"}` per group (sorted by
    name), and `{group: (n_boot,) resampled means}` (empty arrays when n_boot is 0).

    A group's CI resamples its own items with replacement (percentile interval), so each system's
    interval is about that system's conversations only. NaN values are left out."""
    values = np.asarray(values, dtype=float)
    groups = np.asarray(groups, dtype=object)
    keep = np.isfinite(values)
    values, groups = values[keep], groups[keep]
    rng = np.random.default_rng(seed)
    alpha = (1 - level) / 2
    rows, samples = [], {}
    for name in sorted(set(groups.tolist())):
        own = values[groups == name]
        boot = own[rng.integers(0, own.size, size=(n_boot, own.size))].mean(axis=1) if n_boot else np.empty(0)
        low, high = np.quantile(boot, [alpha, 1 - alpha]) if boot.size else (np.nan, np.nan)
        rows.append({"group": name, "mean": _float(own.mean()), "ci_low": _float(low), "ci_high": _float(high),
                     "n": int(own.size)})  # fmt: skip
        samples[name] = boot
    return rows, samples


def mean_difference_tests(means, samples):
    """One row per pair of groups, `a` the one with the higher mean: `{"a", "b", "mean_a", "mean_b",
    "delta", "p", "p_two_sided"}`.

    p: one-sided bootstrap p that a's mean is above b's: the share of resamples (drawn
    independently per group, as the CIs are) in which a's resampled mean is not above b's, with
    the observed difference counted once ((1 + k) / (1 + B)), so p is never 0."""
    names = sorted(name for name, mean in means.items() if mean is not None and len(samples.get(name, ())) > 0)
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = (first, second) if means[first] >= means[second] else (second, first)
            n_boot = min(samples[a].size, samples[b].size)
            not_above = int(np.sum(samples[a][:n_boot] - samples[b][:n_boot] <= 0))
            p = (1 + not_above) / (1 + n_boot)
            rows.append({"a": a, "b": b, "mean_a": means[a], "mean_b": means[b], "delta": means[a] - means[b],
                         "p": p, "p_two_sided": min(1.0, 2 * p)})  # fmt: skip
    return rows


def ranked_clusters(means, samples, *, alpha=ALPHA):
    """`(clusters, tests)`: `{group: rank of its cluster}` (best first, as the metrics' ranking) and
    the pairwise tests it rests on."""
    tests = mean_difference_tests(means, samples)
    return significance_clusters(means, tests, alpha=alpha), tests


def proportions(flags, groups, *, level=CONFIDENCE):
    """Per group: `{"group", "flagged", "n", "rate", "ci_low", "ci_high"}` of 0/1 `flags`, with the
    Wilson score interval of the rate."""
    flags = np.asarray(flags, dtype=float)
    groups = np.asarray(groups, dtype=object)
    rows = []
    for name in sorted(set(groups.tolist())):
        own = flags[groups == name]
        flagged, n = int(own.sum()), int(own.size)
        low, high = wilson(flagged, n, level)
        rows.append({"group": name, "flagged": flagged, "n": n, "rate": flagged / n if n else None,
                     "ci_low": _float(low), "ci_high": _float(high)})  # fmt: skip
    return rows


def worst_and_mean(items, scores):
    """`{item: (mean score, lowest score)}` over each item's scores (an item: a conversation; a
    score: one of its turns' mean rating)."""
    grouped = {}
    for item, score in zip(items, scores, strict=True):
        grouped.setdefault(item, []).append(float(score))
    return {item: (float(np.mean(values)), float(np.min(values))) for item, values in grouped.items()}
