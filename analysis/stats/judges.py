"""LLM judges held against humans as a rater would be, and their length bias (pure: numpy only,
plus the kappa of annotation.quality.agreement that annotator agreement uses).

- Agreement: the judge's score, rounded to the rating scale, against the rounded mean human score
  of each response (Cohen's kappa, unweighted, linear and quadratic), and against each annotator
  on the responses that annotator rated (the median over annotators next to the humans' own).
- Length bias: the correlation of a score with the response's length in words, for the human
  mean and for each judge, so a judge that prefers long replies more than people do shows.
"""

import numpy as np

from analysis.stats.correlation import correlate
from annotation.quality.agreement import cohen_kappas

SCALE = range(1, 6)  # the judges' templates ask for 1-5
MIN_SHARED = 5  # an annotator with fewer judged responses than this gets no kappa


def round_to_scale(values, scale=SCALE):
    """Half-up rounding clipped to the scale (np.rint rounds 2.5 to 2); NaN stays NaN."""
    values = np.asarray(values, dtype=float)
    return np.clip(np.floor(values + 0.5), scale[0], scale[-1])


def judge_kappas(judge, human_mean, annotator_ratings, *, scale=SCALE):
    """Kappas of one judge: against the rounded human mean, and per annotator.

    `judge` and `human_mean` are aligned arrays (NaN: undefined); `annotator_ratings` is
    `{annotator: [(position in those arrays, score)]}`. Ratings off the scale give no kappa
    (a survey on another scale cannot be compared with a 1-5 judge).
    """
    judge = np.asarray(judge, dtype=float)
    defined = np.isfinite(judge) & np.isfinite(human_mean)
    judged = round_to_scale(judge)
    kappa, linear, quadratic = _kappas(judged[defined], round_to_scale(human_mean)[defined], scale)
    per_annotator = []
    for annotator, ratings in annotator_ratings.items():
        shared = [(judged[i], score) for i, score in ratings if np.isfinite(judged[i])]
        if len(shared) < MIN_SHARED or any(score not in scale for _, score in shared):
            continue
        values = _kappas([j for j, _ in shared], [s for _, s in shared], scale)
        per_annotator.append(
            {"annotator": annotator, "n": len(shared), "kappa": values[0], "kappa_quadratic": values[2]}
        )
    return {
        "n": int(defined.sum()),
        "kappa_mean": kappa,
        "kappa_mean_linear": linear,
        "kappa_mean_quadratic": quadratic,
        "annotators": per_annotator,
        "median_kappa_annotators": _median([row["kappa"] for row in per_annotator]),
        "median_quadratic_annotators": _median([row["kappa_quadratic"] for row in per_annotator]),
    }


def _kappas(a, b, scale):
    if not len(a):
        return None, None, None
    return cohen_kappas([int(x) for x in a], [int(y) for y in b], scale=scale)


def _median(values):
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def length_correlations(lengths, measures):
    """`[{"measure", "pearson", "spearman", "n", ...}]`: each measure's correlation with length."""
    lengths = np.asarray(lengths, dtype=float)
    rows = []
    for name, measure in measures.items():
        scores = np.asarray(measure, dtype=float)
        keep = np.isfinite(scores) & np.isfinite(lengths)
        rows.append({"measure": name, **correlate(lengths[keep], scores[keep])})
    return rows
