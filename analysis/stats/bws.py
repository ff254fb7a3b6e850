"""Statistics of best-worst scaling judgements: numpy (and scipy through `pairwise`), no Django.

A judgement is `(context, members, best, worst)`: `members` the tuple's item indices (responses),
`best` and `worst` two of them. Items belong to systems (`system_of[item]`).

- Counting: an item's score is (times picked best - times picked worst) / times shown, in [-1, 1]
  (Orme 2009; Kiritchenko and Mohammad 2017); a system's the same over every tuple its items were
  shown in (so a system with more judged replies weighs them by how often each was shown).
- Strength: MaxDiff read as Bradley-Terry on the pairs each judgement implies: the best beats
  each other member (k - 1 pairs) and each member that is neither beats the worst (k - 2 more),
  2k - 3 pairs a judgement, fitted at system level with `pairwise.ranking` (maximum likelihood,
  bootstrap over contexts). The implied pairs of one judgement are not independent, so the
  likelihood overstates the evidence: the intervals come from resampling contexts, not from it.
- Split-half reliability: each tuple's judgements are dealt at random into two halves, the items'
  counting scores computed in each, Spearman's rho between the halves and its Spearman-Brown
  correction (2 rho / (1 + rho)), averaged over many random splits.
"""

import numpy as np
from scipy import stats

from analysis.stats import pairwise

SPLITS = 100


def counting_scores(judgements, n_items):
    """`(score, best, worst, shown)` arrays per item; score is NaN for an item never shown."""
    best = np.zeros(n_items)
    worst = np.zeros(n_items)
    shown = np.zeros(n_items)
    for _context, members, picked_best, picked_worst in judgements:
        shown[list(members)] += 1
        best[picked_best] += 1
        worst[picked_worst] += 1
    score = np.divide(best - worst, shown, out=np.full(n_items, np.nan), where=shown > 0)
    return score, best, worst, shown


def system_counting(judgements, system_of, n_systems):
    """`(score, shown)` per system: (best - worst) / appearances over all its items' appearances."""
    _, best, worst, shown = counting_scores(judgements, len(system_of))
    system_of = np.asarray(system_of)
    totals = [np.bincount(system_of, weights=values, minlength=n_systems) for values in (best, worst, shown)]
    score = np.divide(totals[0] - totals[1], totals[2], out=np.full(n_systems, np.nan), where=totals[2] > 0)
    return score, totals[2].astype(int)


def implied_pairs(judgements):
    """`(context, winner, loser)` arrays of the pairs the judgements imply (see above)."""
    context, winner, loser = [], [], []
    for ctx, members, best, worst in judgements:
        for member in members:
            if member != best:
                context.append(ctx), winner.append(best), loser.append(member)
            if member not in (best, worst):
                context.append(ctx), winner.append(member), loser.append(worst)
    return np.array(context, dtype=int), np.array(winner, dtype=int), np.array(loser, dtype=int)


def strengths(judgements, system_of, names, *, n_boot=1000, seed=0):
    """The Bradley-Terry ranking of systems from the implied pairs (`pairwise.ranking`'s result)."""
    system_of = np.asarray(system_of)
    context, winner, loser = implied_pairs(judgements)
    # contexts renumbered 0..C-1 for the bootstrap
    _, context = np.unique(context, return_inverse=True)
    return pairwise.ranking(
        names, context, system_of[winner], system_of[loser], np.ones(len(winner)), n_boot=n_boot, seed=seed
    )


def split_half(judgements, groups, n_items, *, splits=SPLITS, seed=0):
    """`{"rho", "spearman_brown", "splits", "n_items"}`: agreement of the items' counting scores
    between random halves of each tuple's judgements (`groups[j]`: judgement j's tuple). Items
    shown in both halves only; None figures when fewer than three are."""
    rng = np.random.default_rng(seed)
    by_group = {}
    for index, group in enumerate(groups):
        by_group.setdefault(group, []).append(index)
    rhos = []
    n_common = 0
    for _ in range(splits):
        half = np.zeros(len(judgements), dtype=bool)
        for indices in by_group.values():
            order = rng.permutation(indices)
            # the odd one out goes to a half drawn each time, so neither half is always larger
            start = rng.integers(2)
            half[order[start::2]] = True
        first = counting_scores([j for j, h in zip(judgements, half, strict=True) if h], n_items)[0]
        second = counting_scores([j for j, h in zip(judgements, half, strict=True) if not h], n_items)[0]
        common = np.isfinite(first) & np.isfinite(second)
        n_common = int(common.sum())
        if n_common < 3 or np.ptp(first[common]) == 0 or np.ptp(second[common]) == 0:
            continue
        rhos.append(stats.spearmanr(first[common], second[common]).statistic)
    if not rhos:
        return {"rho": None, "spearman_brown": None, "splits": 0, "n_items": n_common}
    rho = float(np.mean(rhos))
    brown = 2 * rho / (1 + rho) if rho > -1 else None
    return {"rho": rho, "spearman_brown": brown, "splits": len(rhos), "n_items": n_common}
