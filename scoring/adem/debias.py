"""Length debiasing (Lowe et al. 2017, section 4): make response length useless for predicting the score.

Training examples are binned by (response length, rounded score). Within each score, every
length bin is over-sampled to the size of that score's largest bin, so each score sees the
same length distribution.
"""

from collections import defaultdict

import numpy as np


def length_bins(lengths, n_bins=5):
    """Quantile bins of response length (in tokens), 0..n_bins-1."""
    lengths = np.asarray(lengths, dtype=np.float64)
    if lengths.size == 0:
        return np.zeros(0, dtype=np.int64)
    edges = np.unique(np.quantile(lengths, np.linspace(0, 1, n_bins + 1)[1:-1]))
    return np.searchsorted(edges, lengths, side="right")


def debias_indices(lengths, scores, *, seed=0, n_bins=5):
    """Indices (with repeats) of the over-sampled training set."""
    bins = length_bins(lengths, n_bins)
    groups = defaultdict(list)
    for i, (b, s) in enumerate(zip(bins, np.rint(np.asarray(scores, dtype=np.float64)), strict=True)):
        groups[(int(s), int(b))].append(i)
    by_score = defaultdict(list)
    for (score, _), members in groups.items():
        by_score[score].append(members)
    rng = np.random.default_rng(seed)
    out = []
    for score in sorted(by_score):
        target = max(len(m) for m in by_score[score])
        for members in by_score[score]:
            out.extend(members)
            extra = target - len(members)
            if extra > 0:
                out.extend(rng.choice(members, size=extra, replace=True).tolist())
    return np.array(sorted(out), dtype=np.int64)
