"""How a judge's scores sit against the humans' (calibration), and whether a pairwise judge
depends on the order it is shown the two responses. Pure: numpy, plus the kappa definition that
annotator agreement uses (annotation.quality.agreement, itself pure), so judge-human and
human-human kappas are one statistic.

- Confusion matrix: the judge's score, rounded half-up onto the scale, against the human
  reference of the same response (the rounded mean of its ratings, or their majority label).
- Cohen's kappa, unweighted, linear and quadratic (weighted kappa), on the same pairs.
- Mean offset: mean(judge - human mean), the judge's bias on the scale; mean absolute error.
- Scale use: the share of each scale point among the judge's and among the humans' scores (a
  judge that never says 1 or 5 shows here).
- Per-system bias: per system the judge's offset, and its difference from the judge's overall
  offset: a system the judge favours more than the humans do has a positive relative bias.
- Position consistency: of pairs judged in both orders, the share whose verdicts agree after
  swapping, and the share of decisive verdicts that went to the response shown first.
"""

from collections import Counter

import numpy as np

from analysis.stats.judges import round_to_scale
from annotation.quality.agreement import cohen_kappas


def human_reference(ratings_per_item, how="mean"):
    """One human reference per response from its list of ratings: "mean", or "majority" (the
    most frequent rating; a tie between modes goes to the one nearest the mean, then the lower).
    A response without ratings gets NaN."""
    reference = []
    for ratings in ratings_per_item:
        if not len(ratings):
            reference.append(np.nan)
            continue
        mean = float(np.mean(ratings))
        if how == "mean":
            reference.append(mean)
        elif how == "majority":
            counts = Counter(ratings)
            top = max(counts.values())
            modes = sorted(value for value, count in counts.items() if count == top)
            reference.append(float(min(modes, key=lambda value: (abs(value - mean), value))))
        else:
            raise ValueError(f"unknown human reference {how!r}: 'mean' or 'majority'")
    return np.array(reference, dtype=float)


def confusion_matrix(judge, reference, scale):
    """Counts (rows: judge's score, columns: human reference), both rounded onto `scale`."""
    labels = list(scale)
    matrix = np.zeros((len(labels), len(labels)), dtype=int)
    index = {value: k for k, value in enumerate(labels)}
    for j, h in zip(round_to_scale(judge, scale), round_to_scale(reference, scale), strict=True):
        if np.isfinite(j) and np.isfinite(h):
            matrix[index[int(j)], index[int(h)]] += 1
    return matrix


def scale_use(scores, scale):
    """{scale point: share of the scores that are (rounded to) it}; empty input gives zeros."""
    rounded = round_to_scale(scores, scale)
    rounded = rounded[np.isfinite(rounded)]
    return {value: float(np.mean(rounded == value)) if rounded.size else 0.0 for value in scale}


def system_bias(judge, human_mean, systems):
    """Per system: n, judge mean, human mean, offset (judge - human) and relative bias (the
    system's offset minus the judge's overall offset), sorted by relative bias, largest first."""
    judge, human_mean, systems = np.asarray(judge, float), np.asarray(human_mean, float), np.asarray(systems)
    defined = np.isfinite(judge) & np.isfinite(human_mean)
    overall = float(np.mean(judge[defined] - human_mean[defined])) if defined.any() else None
    rows = []
    for system in sorted(set(systems[defined].tolist()), key=str):
        mine = defined & (systems == system)
        offset = float(np.mean(judge[mine] - human_mean[mine]))
        rows.append(
            {
                "system": system,
                "n": int(mine.sum()),
                "judge_mean": float(judge[mine].mean()),
                "human_mean": float(human_mean[mine].mean()),
                "offset": offset,
                "relative_bias": offset - overall,
            }
        )
    return sorted(rows, key=lambda row: -row["relative_bias"])


def calibration(judge, ratings_per_item, *, scale, systems=None, reference="mean"):
    """The judge's calibration against the humans on the responses both scored.

    `judge`: one score per response (NaN: not judged); `ratings_per_item`: the humans' ratings of
    each response. Returns n, the confusion matrix (with its `labels`), kappas, mean offset, mean
    absolute error, scale use of judge and humans, and per-system bias when `systems` is given.
    """
    scale = list(scale)
    judge = np.asarray(judge, dtype=float)
    human_mean = human_reference(ratings_per_item, "mean")
    target = human_mean if reference == "mean" else human_reference(ratings_per_item, reference)
    defined = np.isfinite(judge) & np.isfinite(target)
    judged, wanted = round_to_scale(judge[defined], scale), round_to_scale(target[defined], scale)
    if defined.any():
        kappa, linear, quadratic = cohen_kappas([int(x) for x in judged], [int(y) for y in wanted], scale=scale)
    else:
        kappa = linear = quadratic = None
    gaps = judge[defined] - human_mean[defined]
    human_scores = [score for ratings in ratings_per_item for score in ratings]
    return {
        "n": int(defined.sum()),
        "reference": reference,
        "labels": scale,
        "confusion": confusion_matrix(judge[defined], target[defined], scale).tolist(),
        "kappa": kappa,
        "kappa_linear": linear,
        "kappa_quadratic": quadratic,
        "mean_offset": float(gaps.mean()) if gaps.size else None,
        "mean_absolute_error": float(np.abs(gaps).mean()) if gaps.size else None,
        "scale_use": {"judge": scale_use(judge[defined], scale), "humans": scale_use(human_scores, scale)},
        "systems": system_bias(judge, human_mean, systems) if systems is not None else [],
    }


def position_consistency(shown_order, swapped_order):
    """Order effects of a pairwise judge that judged each pair twice, once in each order.

    Verdicts are by position: 1 = the response shown first won, 0 = the second won, 0.5 = tie.
    The two verdicts of a pair are consistent when they name the same response (or both tie):
    swapped = 1 - shown. Returns n pairs, the consistent share, and the share of decisive
    verdicts (of both orders) that went to the response shown first (0.5 = no position bias).
    """
    shown = np.asarray(shown_order, dtype=float)
    swapped = np.asarray(swapped_order, dtype=float)
    keep = np.isfinite(shown) & np.isfinite(swapped)
    shown, swapped = shown[keep], swapped[keep]
    verdicts = np.concatenate([shown, swapped])
    decisive = verdicts[verdicts != 0.5]
    return {
        "n": int(shown.size),
        "consistent": float(np.mean(np.isclose(swapped, 1.0 - shown))) if shown.size else None,
        "first_position_wins": float(np.mean(decisive == 1.0)) if decisive.size else None,
    }
