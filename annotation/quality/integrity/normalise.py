"""Per-worker z-scores (WMT direct assessment) and competence-weighted item scores.

WMT's DA (Graham et al. 2013; used in WMT since 2016) standardises each rater's scores by that rater's
own mean and standard deviation before averaging per item, so a lenient rater and a harsh one count
alike. A worker whose scores do not vary has no standard deviation to divide by: their answers get no
z-score and are named in `constant_workers`, never silently given 0.
"""

import math
from dataclasses import dataclass
from statistics import fmean, pstdev


@dataclass(frozen=True)
class ZScores:
    scores: list  # (worker, item, z)
    item_means: dict  # item -> mean z over the workers that have z-scores
    constant_workers: list  # workers left out: one answer only, or all answers equal


def _by_worker(ratings):
    table = {}
    for worker, item, score in ratings:
        table.setdefault(worker, []).append((item, float(score)))
    return table


def worker_z_scores(ratings):
    """z = (score - worker mean) / worker standard deviation (population sd, as a rater's whole set is
    the population being standardised)."""
    scores, constant = [], []
    for worker, answered in _by_worker(ratings).items():
        values = [s for _, s in answered]
        spread = pstdev(values) if len(values) > 1 else 0.0
        if spread == 0:
            constant.append(worker)
            continue
        centre = fmean(values)
        scores.extend((worker, item, (s - centre) / spread) for item, s in answered)
    by_item = {}
    for _, item, z in scores:
        by_item.setdefault(item, []).append(z)
    return ZScores(scores=scores, item_means={i: fmean(v) for i, v in by_item.items()}, constant_workers=constant)


def weighted_item_scores(ratings, weights, *, default_weight=None):
    """Each item's weighted mean score, Σ w_j x_ij / Σ w_j, with w_j a worker's competence.

    A worker missing from `weights` gets `default_weight`, or is refused when it is None (a typo in an
    id would otherwise drop a worker silently). An item whose raters all weigh 0 has no score (None)."""
    sums, totals = {}, {}
    for worker, item, score in ratings:
        if worker in weights:
            weight = float(weights[worker])
        elif default_weight is not None:
            weight = float(default_weight)
        else:
            raise KeyError(f"no weight for worker {worker!r}")
        if weight < 0 or math.isnan(weight):
            raise ValueError(f"weight of worker {worker!r} must be a number ≥ 0, not {weight}")
        sums[item] = sums.get(item, 0.0) + weight * float(score)
        totals[item] = totals.get(item, 0.0) + weight
    return {item: (sums[item] / totals[item] if totals[item] > 0 else None) for item in sums}


def plain_item_scores(ratings):
    """The plain mean per item (every worker weighs 1): the default the weighted scores stand beside."""
    return weighted_item_scores(ratings, {}, default_weight=1.0)
