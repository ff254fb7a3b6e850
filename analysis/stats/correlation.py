"""Point correlations with p-values, and Williams' test for comparing two dependent correlations."""

import math
from itertools import combinations

import numpy as np

from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
stats = lazy_module("scipy.stats")


def _clean(value):
    """A float for JSON: NaN (undefined, e.g. a constant vector) becomes None."""
    value = float(value)
    return None if math.isnan(value) else value


def correlate(x, y):
    """Pearson r, Spearman rho and Kendall tau-b of two equal-length vectors, two-sided p-values, n.

    Fewer than three points, or a constant vector, give None rather than a warning-laden NaN.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = int(x.size)
    result = {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}
    result |= {"kendall": None, "kendall_p": None, "n": n}
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return result
    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    kendall = stats.kendalltau(x, y)  # tau-b: ties in either vector corrected for
    result.update(
        pearson=_clean(pearson.statistic),
        pearson_p=_clean(pearson.pvalue),
        spearman=_clean(spearman.statistic),
        spearman_p=_clean(spearman.pvalue),
        kendall=_clean(kendall.statistic),
        kendall_p=_clean(kendall.pvalue),
    )
    return result


def fisher_interval(r, n, *, level=0.95, spearman=False):
    """Confidence interval for a correlation over n independent items, by Fisher's z transform.

    z = atanh(r) is close to normal with standard error 1/sqrt(n - 3) for Pearson's r and
    sqrt(1.06 / (n - 3)) for Spearman's rho (Fieller, Hartley & Pearson 1957). It treats the
    n items as the sample, as the t-test behind the p-value does, so with few items (systems)
    the interval is as wide as the p-value says it must be. Returns (low, high); (None, None)
    when r is undefined or n < 4.
    """
    if r is None or n is None or n < 4 or not math.isfinite(r):
        return None, None
    r = max(min(float(r), 1 - 1e-12), -1 + 1e-12)  # |r| = 1 has z = +-inf: the interval collapses onto it
    spread = math.sqrt((1.06 if spearman else 1.0) / (n - 3)) * float(stats.norm.ppf((1 + level) / 2))
    z = math.atanh(r)
    return math.tanh(z - spread), math.tanh(z + spread)


def williams_test(r12, r13, r23, n):
    """Williams' (1959) t for H0: rho12 = rho13, where 1 is the human score and 2, 3 two metrics.

    The form used by the WMT metrics tasks (Graham & Baldwin 2014, after Steiger 1980):
        t = (r12 - r13) * sqrt((n-1)(1+r23)) / sqrt(2 (n-1)/(n-3) |R| + (r12+r13)^2 / 4 * (1-r23)^3)
    with |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23 and n-3 degrees of freedom.
    Returns (t, one-sided p that metric 2 correlates better than metric 3, two-sided p).
    """
    if n <= 3:
        return None, None, None
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * (n - 1) / (n - 3) * det + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3
    if denominator <= 0:
        return None, None, None
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denominator)
    df = n - 3
    return t, float(stats.t.sf(t, df)), float(2 * stats.t.sf(abs(t), df))


def pairwise_williams(human, metrics):
    """Williams' test on Pearson r for every pair of metrics, on the items both metrics score.

    `metrics` maps name -> vector aligned with `human` (NaN where undefined). Each row names the
    metric with the higher correlation as "a", so "p" is the one-sided p-value that a beats b.
    """
    human = np.asarray(human, dtype=float)
    rows = []
    for first, second in combinations(sorted(metrics), 2):
        name_1, name_2 = first, second
        x1 = np.asarray(metrics[name_1], dtype=float)
        x2 = np.asarray(metrics[name_2], dtype=float)
        mask = np.isfinite(human) & np.isfinite(x1) & np.isfinite(x2)
        h, a, b = human[mask], x1[mask], x2[mask]
        n = int(mask.sum())
        if n <= 3 or min(np.ptp(h), np.ptp(a), np.ptp(b)) == 0:
            continue
        r = np.corrcoef(np.vstack([h, a, b]))
        r12, r13, r23 = float(r[0, 1]), float(r[0, 2]), float(r[1, 2])
        if r13 > r12:
            name_1, name_2, r12, r13 = name_2, name_1, r13, r12
        t, p_one, p_two = williams_test(r12, r13, r23, n)
        rows.append(
            {
                "a": name_1,
                "b": name_2,
                "r_a": r12,
                "r_b": r13,
                "r_ab": r23,
                "n": n,
                "t": t,
                "p": p_one,
                "p_two_sided": p_two,
            }
        )
    return rows
