"""Boot-Both confidence intervals for system-level correlations (Deutsch, Dror & Roth 2021).

A system-level correlation has two sources of uncertainty: which systems happen to be compared
(few, often 4-10) and which items (contexts) each system's mean is taken over. Boot-Both
resamples both at once: each resample draws the systems with replacement *and* the contexts
with replacement (the same drawn contexts for every system, since the systems answered the same
contexts), recomputes every system's mean over its responses to the drawn contexts, and
correlates the drawn systems' means. So an interval is wide where 4-5 systems cannot tell.

Vectorised: per-(context, system) sums of every column are computed once; a block of resamples
is a (B, C) matrix of context counts, so all systems' means for all resamples are one matrix
product. Pearson, Spearman and Kendall tau-b over the drawn systems are then row-wise operations.

Intervals are percentile intervals taken symmetrically from both tails, and the p-value reported
with them is read off the same resamples (twice the share on the smaller side of zero), so an
interval excludes 0 exactly when that p-value is below 1 - level: the interval never contradicts
the p-value printed beside it.
"""

import numpy as np

from analysis.stats.bootstrap import BLOCK_ELEMENTS, resample_counts
from annotation.services.runtime.lazy_import import lazy_module

stats = lazy_module("scipy.stats")  # loaded when a report is computed, not at start-up

KINDS = ("pearson", "spearman", "kendall")


def _codes(labels):
    """Sorted distinct labels and each item's code (object arrays, e.g. system names, as strings)."""
    labels = np.asarray(labels)
    values, codes = np.unique(labels.astype(str) if labels.dtype == object else labels, return_inverse=True)
    return values, codes.ravel()


def _cell_sums(columns, system_codes, context_codes, n_systems, n_contexts):
    """(C, S * K) sums of each column and counts of its defined values, per (context, system)."""
    k = columns.shape[1]
    finite = np.isfinite(columns)
    values = np.where(finite, columns, 0.0)
    cell = (context_codes * n_systems + system_codes)[:, None] * k + np.arange(k)[None, :]
    size = n_contexts * n_systems * k
    sums = np.bincount(cell.ravel(), weights=values.ravel(), minlength=size)
    counts = np.bincount(cell.ravel(), weights=finite.ravel().astype(float), minlength=size)
    return sums.reshape(n_contexts, n_systems * k), counts.reshape(n_contexts, n_systems * k)


def _row_pearson(x, y):
    """Pearson of x[b] with y[b] for every row b (NaN where a row is constant or undefined)."""
    x = x - x.mean(axis=1, keepdims=True)
    y = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    return np.clip(r, -1.0, 1.0)


def _row_kendall(x, y):
    """Kendall's tau-b of x[b] with y[b] for every row: sum of sign products over pairs i < j,
    over the square root of (pairs untied in x) * (pairs untied in y)."""
    upper = np.triu(np.ones((x.shape[1], x.shape[1]), dtype=bool), 1)
    sx = np.sign(x[:, :, None] - x[:, None, :])[:, upper]
    sy = np.sign(y[:, :, None] - y[:, None, :])[:, upper]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sx * sy).sum(axis=1) / np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))


def symmetric_interval(samples, level):
    """(low, high, p): percentile interval and the two-sided p-value of 0 from the same draws.

    low is the smallest draw with at least alpha of the draws at or below it, high the largest
    with at least alpha at or above it; p = 2 * min(share <= 0, share >= 0). Hence low > 0 or
    high < 0 exactly when p < 2 * alpha. NaN draws (undefined correlations) are left out; fewer
    than half defined gives no interval.
    """
    finite = np.sort(samples[np.isfinite(samples)])
    if finite.size == 0 or finite.size * 2 < samples.size:
        return None, None, None
    alpha = (1 - level) / 2
    m = finite.size
    cut = max(int(np.ceil(alpha * m - 1e-9)), 1)  # draws needed in a tail
    low, high = finite[cut - 1], finite[m - cut]
    p = min(1.0, 2 * min(np.count_nonzero(finite <= 0), np.count_nonzero(finite >= 0)) / m)
    return float(low), float(high), float(p)


def boot_both(human, metrics, systems, contexts, *, n_boot=1000, seed=0, level=0.95):
    """Boot-Both intervals of the system-level Pearson, Spearman and Kendall correlations.

    human: (n,) scores; metrics: name -> (n,) vector (NaN where undefined); systems and contexts:
    (n,) labels of each response. Returns name -> {"pearson": (low, high, p), "spearman": ...,
    "kendall": ...}; (None, None, None) with fewer than three systems or no resamples.
    """
    names = list(metrics)
    empty = {name: dict.fromkeys(KINDS, (None, None, None)) for name in names}
    system_labels, system_codes = _codes(systems)
    context_labels, context_codes = _codes(contexts)
    n_systems, n_contexts = system_labels.size, context_labels.size
    if n_systems < 3 or n_boot <= 0 or not names:
        return empty
    columns = np.column_stack([np.asarray(human, dtype=float)] + [np.asarray(metrics[m], dtype=float) for m in names])
    k = columns.shape[1]
    sums, counts = _cell_sums(columns, system_codes, context_codes, n_systems, n_contexts)
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, BLOCK_ELEMENTS // max(n_contexts, 1)))
    draws = {name: {kind: [] for kind in KINDS} for name in names}
    done = 0
    while done < n_boot:
        size = min(block, n_boot - done)
        weights = resample_counts(rng.integers(0, n_contexts, size=(size, n_contexts))).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = ((weights @ sums) / (weights @ counts)).reshape(size, n_systems, k)
        drawn = rng.integers(0, n_systems, size=(size, n_systems))
        chosen = np.take_along_axis(means, drawn[:, :, None], axis=1)  # (B, S, K)
        human_means = chosen[:, :, 0]
        human_ranks = stats.rankdata(human_means, axis=1)
        for j, name in enumerate(names, start=1):
            metric_means = chosen[:, :, j]
            undefined = ~(np.isfinite(human_means).all(axis=1) & np.isfinite(metric_means).all(axis=1))
            results = {
                "pearson": _row_pearson(human_means, metric_means),
                "spearman": _row_pearson(human_ranks, stats.rankdata(metric_means, axis=1)),
                "kendall": _row_kendall(human_means, metric_means),
            }
            for kind, values in results.items():
                values[undefined] = np.nan
                draws[name][kind].append(values)
        done += size
    return {
        name: {kind: symmetric_interval(np.concatenate(parts), level) for kind, parts in by_kind.items()}
        for name, by_kind in draws.items()
    }
