"""Krippendorff's alpha over all ratings, through the `krippendorff` package (pure, no Django)."""

import math
import warnings

import krippendorff
import numpy as np


def krippendorff_alpha(ratings, *, scale, level="ordinal"):
    """Krippendorff's alpha over all ratings (any number of raters per item, missing allowed).

    Alpha depends only on which values were given to the same item, not on who gave them, so
    the reliability matrix is packed: row k holds each item's k-th rating. This gives exactly
    the value of the annotator-by-item matrix and stays small when raters are anonymous per
    item (one "annotator" per rating, as in GRADE). `None` when fewer than two values are
    pairable or all pairable values are equal.
    """
    per_item = {}
    for _annotator, item, score in ratings:
        per_item.setdefault(item, []).append(score)
    pairable = [scores for scores in per_item.values() if len(scores) >= 2]
    if not pairable or len({s for scores in pairable for s in scores}) < 2:
        return None
    depth = max(len(scores) for scores in pairable)
    matrix = np.full((depth, len(pairable)), np.nan)
    for column, scores in enumerate(pairable):
        matrix[: len(scores), column] = scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, value_domain=list(scale))
    return None if math.isnan(value) else float(value)
