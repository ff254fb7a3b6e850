"""Carelessness flags on a worker's ratings and pairwise choices; each returns its numbers.

Straight-lining and near-zero variance look at one worker alone; the speed flags compare a worker with
their own and the crowd's medians; the consensus flag compares a worker's leave-one-out error with
everyone else's, robustly (median and MAD), so a few careless workers do not hide each other by
inflating the spread they are measured against. A flag is for the extremes; the continuum between
careful and careless is what the competence estimates of `mace` and `dawid_skene` rank.
"""

import math
from collections import Counter
from itertools import groupby
from statistics import correlation, fmean, median, pstdev

from annotation.quality.integrity.evidence import Flag, share
from annotation.quality.integrity.thresholds import DEFAULTS

STRAIGHT_LINING = "straight_lining"
NEAR_ZERO_VARIANCE = "near_zero_variance"
ONE_SIDE_ALWAYS = "one_side_always"
TOO_FAST = "too_fast"
FAR_FROM_CONSENSUS = "far_from_consensus"
# MAD × 1.4826 estimates a normal distribution's standard deviation; mean absolute deviation × 1.2533
# does too, and stands in when more than half the workers share one value (MAD = 0), as Iglewicz and
# Hoaglin suggest.
MAD_TO_SD = 1.4826
MEAN_AD_TO_SD = 1.2533


def straight_lining(scores, *, thresholds=DEFAULTS):
    """`scores`: one worker's ratings in the order given."""
    scores = list(scores)
    top_value, top_count = Counter(scores).most_common(1)[0] if scores else (None, 0)
    longest_run = max((len(list(run)) for _, run in groupby(scores)), default=0)
    modal_share = share(top_count, len(scores))
    raised = len(scores) >= thresholds.min_ratings and modal_share >= thresholds.straight_line_share
    return Flag(STRAIGHT_LINING, raised, f"share of the most frequent answer ≥ {thresholds.straight_line_share} "
                f"(≥ {thresholds.min_ratings} answers)", {
                    "answers": len(scores), "most_frequent": top_value, "most_frequent_share": modal_share,
                    "longest_run": longest_run,
                })


def near_zero_variance(scores, *, thresholds=DEFAULTS):
    scores = [float(s) for s in scores]
    spread = pstdev(scores) if len(scores) > 1 else None
    raised = len(scores) >= thresholds.min_ratings and spread is not None and spread < thresholds.min_rating_sd
    return Flag(NEAR_ZERO_VARIANCE, raised, f"standard deviation of the ratings < {thresholds.min_rating_sd} "
                f"(≥ {thresholds.min_ratings} answers)", {"answers": len(scores), "sd": spread})


def binomial_two_sided(k, n):
    """P(a fair coin gives an outcome at least as lopsided as k of n), exactly."""
    if n == 0:
        return 1.0
    extreme = max(k, n - k)
    tail = sum(math.comb(n, j) for j in range(extreme, n + 1)) / 2**n
    return min(1.0, 2 * tail) if extreme * 2 != n else 1.0


def one_side_always(sides, *, thresholds=DEFAULTS):
    """`sides`: one worker's pairwise choices as positions, "left"/"right" (anything else, a tie, is
    counted but not in the share)."""
    sides = list(sides)
    left, right = sides.count("left"), sides.count("right")
    decisive = left + right
    favourite = max(left, right)
    side_share = share(favourite, decisive)
    raised = decisive >= thresholds.min_ratings and side_share >= thresholds.one_side_share
    return Flag(ONE_SIDE_ALWAYS, raised, f"share of decisive choices on one side ≥ {thresholds.one_side_share} "
                f"(≥ {thresholds.min_ratings} decisive choices)", {
                    "answers": len(sides), "left": left, "right": right, "ties": len(sides) - decisive,
                    "side_share": side_share,
                    "favoured_side": ("left" if left >= right else "right") if decisive else None,
                    "p_value_fair_coin": binomial_two_sided(left, decisive),
                })


def too_fast(seconds_by_worker, *, thresholds=DEFAULTS):
    """`seconds_by_worker`: {worker: [seconds per answer]}. The crowd's median is the median of the
    workers' medians, so a worker with many answers does not set the pace for everyone."""
    medians = {w: median(s) for w, s in seconds_by_worker.items() if s}
    crowd = median(medians.values()) if medians else None
    flags = {}
    for worker, seconds in seconds_by_worker.items():
        own = medians.get(worker)
        bound = min(own, crowd) * thresholds.too_fast_vs_own if own is not None else None
        hurried = [k for k, s in enumerate(seconds) if bound is not None and s < bound]
        ratio = share(own, crowd) if own is not None else None
        raised = len(seconds) >= thresholds.min_ratings and ratio is not None and ratio < thresholds.too_fast_vs_crowd
        flags[worker] = Flag(TOO_FAST, raised, f"median seconds / crowd median < {thresholds.too_fast_vs_crowd:.3g} "
                             f"(≥ {thresholds.min_ratings} answers)", {
                                 "answers": len(seconds), "median_seconds": own, "crowd_median_seconds": crowd,
                                 "ratio_to_crowd": ratio, "hurried_answers": len(hurried),
                                 "hurried_positions": hurried,  # indexes into the worker's list
                                 "hurried_bound_seconds": bound,
                             })
    return flags


def leave_one_out_pairs(ratings):
    """{worker: [(their score, mean score of the other raters of the item)]}; items rated by nobody else
    are skipped."""
    by_item = {}
    for worker, item, score in ratings:
        by_item.setdefault(item, []).append((worker, float(score)))
    pairs = {}
    for answers in by_item.values():
        if len(answers) < 2:
            continue
        total = sum(s for _, s in answers)
        for worker, score in answers:
            pairs.setdefault(worker, []).append((score, (total - score) / (len(answers) - 1)))
    return pairs


def _correlation(pairs):
    own = [a for a, _ in pairs]
    others = [b for _, b in pairs]
    if len(pairs) < 2 or pstdev(own) == 0 or pstdev(others) == 0:
        return None
    return correlation(own, others)


def robust_z(values):
    """(value - median) / robust sd, robust sd from the MAD (or the mean absolute deviation when the MAD
    is 0); None for all when there is no spread at all."""
    values = dict(values)
    if not values:
        return {}
    centre = median(values.values())
    deviations = [abs(v - centre) for v in values.values()]
    spread = median(deviations) * MAD_TO_SD or fmean(deviations) * MEAN_AD_TO_SD
    return {k: ((v - centre) / spread if spread else None) for k, v in values.items()}


def far_from_consensus(ratings, *, thresholds=DEFAULTS):
    """`ratings`: (worker, item, score). One flag per worker who shares items with others.

    The decision statistic is the correlation between a worker's scores and the other raters' mean on
    the same items, robust-z'd across workers (low side). A correlation, not the mean absolute error the
    evidence also shows, because a consistently harsh or lenient rater follows the consensus as well as
    anyone and is not careless; their offset is what per-worker z-scores remove."""
    pairs = leave_one_out_pairs(ratings)
    correlations = {w: _correlation(p) for w, p in pairs.items()}
    eligible = {w: -r for w, r in correlations.items() if r is not None and len(pairs[w]) >= thresholds.min_ratings}
    z = robust_z(eligible)
    crowd = median(-v for v in eligible.values()) if eligible else None
    flags = {}
    for worker, answered in pairs.items():
        score = z.get(worker)
        gap = crowd - correlations[worker] if score is not None else None
        raised = score is not None and score >= thresholds.consensus_robust_z and gap >= thresholds.consensus_min_gap
        flags[worker] = Flag(FAR_FROM_CONSENSUS, raised, "robust z of (minus) the correlation with the other raters' "
                             f"mean ≥ {thresholds.consensus_robust_z} and ≥ {thresholds.consensus_min_gap} below the "
                             f"crowd's median correlation (≥ {thresholds.min_ratings} shared items)", {
                                 "answers_compared": len(answered),
                                 "correlation_with_others": correlations[worker],
                                 "crowd_median_correlation": crowd,
                                 "robust_z": score,
                                 "below_crowd_median": gap,
                                 "mean_absolute_error": fmean(abs(a - b) for a, b in answered),
                             })
    return flags
