"""Correlation of predictions with human scores, utterance-level and system-level."""

from collections import defaultdict

import numpy as np

from annotation.services.runtime.lazy_import import lazy_module

# Loaded on first use, not at import: Django loads this module at start-up (docs/metrics.md, "Start-up").
stats = lazy_module("scipy.stats")


def _finite(value):
    return None if value is None or not np.isfinite(value) else float(value)


def correlations(predicted, human):
    """{"pearson", "pearson_p", "spearman", "spearman_p", "n"}; None where undefined."""
    predicted = np.asarray(predicted, dtype=np.float64)
    human = np.asarray(human, dtype=np.float64)
    n = int(predicted.size)
    out = {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None, "n": n}
    if n < 3 or np.std(predicted) < 1e-12 or np.std(human) < 1e-12:
        return out
    pearson = stats.pearsonr(predicted, human)
    spearman = stats.spearmanr(predicted, human)
    out.update(
        pearson=_finite(pearson[0]),
        pearson_p=_finite(pearson[1]),
        spearman=_finite(spearman[0]),
        spearman_p=_finite(spearman[1]),
    )
    return out


def system_level(predicted, human, systems):
    """Per-system means and their correlation (None with fewer than three systems)."""
    sums = defaultdict(lambda: [0.0, 0.0, 0])
    for p, h, s in zip(predicted, human, systems, strict=True):
        entry = sums[s]
        entry[0] += float(p)
        entry[1] += float(h)
        entry[2] += 1
    means = {s: {"predicted": v[0] / v[2], "human": v[1] / v[2], "n": v[2]} for s, v in sorted(sums.items())}
    out = {"systems": means, "pearson": None, "spearman": None, "n": len(means)}
    if len(means) >= 3:
        predicted_means = [m["predicted"] for m in means.values()]
        human_means = [m["human"] for m in means.values()]
        if np.std(predicted_means) > 1e-12 and np.std(human_means) > 1e-12:
            out["pearson"] = _finite(stats.pearsonr(predicted_means, human_means)[0])
            out["spearman"] = _finite(stats.spearmanr(predicted_means, human_means)[0])
    return out
