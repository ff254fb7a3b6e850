"""Statistics of pairwise (A/B) judgements: numpy and scipy only, no Django.

Judgements come as parallel integer arrays: `context` (0..C-1), `a` and `b` (system indices
0..S-1) and `outcome` (1 = a won, 0 = b won, 0.5 = tie).

Bradley-Terry: P(i beats j) = 1 / (1 + exp(s_j - s_i)), fitted by maximum likelihood with scipy's
L-BFGS-B on the win-count matrix. **Ties count half a win for each side** (the usual
"ties as half" convention; no Davidson tie parameter). A very small ridge penalty
(`RIDGE` * sum s^2) keeps strengths finite when a system never loses. Strengths are
log-strengths centred to mean 0. Confidence intervals: percentile bootstrap over contexts (all
judgements of a resampled context come along), so a context judged by many people is not
counted as many independent facts.
"""

import itertools

import numpy as np
from scipy import optimize, stats

RIDGE = 1e-4
CONFIDENCE = 0.95


def win_counts(a, b, outcome, n_systems, weights=None):
    """`W[i, j]`: wins of i over j (ties count half), as floats."""
    weights = np.ones(len(a)) if weights is None else weights
    counts = np.zeros((n_systems, n_systems))
    np.add.at(counts, (a, b), weights * outcome)
    np.add.at(counts, (b, a), weights * (1.0 - outcome))
    return counts


def _negative_log_likelihood(strengths, wins):
    diff = strengths[None, :] - strengths[:, None]  # s_j - s_i
    # log(1 + exp(s_j - s_i)) = -log P(i beats j), computed stably.
    loss = np.sum(wins * np.logaddexp(0.0, diff)) + RIDGE * np.sum(strengths**2)
    p_loss = 1.0 / (1.0 + np.exp(-diff))  # P(j beats i)
    grad_pairs = wins * p_loss
    gradient = -grad_pairs.sum(axis=1) + grad_pairs.sum(axis=0) + 2 * RIDGE * strengths
    return loss, gradient


def bradley_terry(wins, start=None):
    """Log-strengths (mean 0) maximising the Bradley-Terry likelihood of the win matrix."""
    n = wins.shape[0]
    x0 = np.zeros(n) if start is None else start
    result = optimize.minimize(_negative_log_likelihood, x0, args=(wins,), jac=True, method="L-BFGS-B")
    strengths = result.x
    return strengths - strengths.mean()


def context_win_tensor(context, a, b, outcome, *, n_contexts, n_systems):
    """`(n_contexts, S*S)` win counts per context, so a bootstrap sample is one matrix product."""
    rows = np.zeros((n_contexts, n_systems * n_systems))
    np.add.at(rows, (context, a * n_systems + b), outcome)
    np.add.at(rows, (context, b * n_systems + a), 1.0 - outcome)
    return rows


def bootstrap_strengths(context, a, b, outcome, n_systems, *, n_boot=1000, seed=0, point=None):
    """`(n_boot, S)` Bradley-Terry strengths, contexts resampled with replacement."""
    n_contexts = int(context.max()) + 1 if len(context) else 0
    if n_contexts == 0 or n_boot == 0:
        return np.zeros((0, n_systems))
    per_context = context_win_tensor(context, a, b, outcome, n_contexts=n_contexts, n_systems=n_systems)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n_contexts, np.full(n_contexts, 1.0 / n_contexts), size=n_boot).astype(float)
    matrices = (draws @ per_context).reshape(n_boot, n_systems, n_systems)
    start = point if point is not None else np.zeros(n_systems)
    return bradley_terry_batch(matrices, start=start)


def _batch_negative_log_likelihood(flat, wins):
    n_boot, n = wins.shape[0], wins.shape[1]
    strengths = flat.reshape(n_boot, n)
    diff = strengths[:, None, :] - strengths[:, :, None]
    loss = np.sum(wins * np.logaddexp(0.0, diff)) + RIDGE * np.sum(strengths**2)
    grad_pairs = wins / (1.0 + np.exp(-diff))
    gradient = -grad_pairs.sum(axis=2) + grad_pairs.sum(axis=1) + 2 * RIDGE * strengths
    return loss, gradient.ravel()


def bradley_terry_batch(matrices, start=None):
    """`bradley_terry` of many win matrices at once: the fits are independent, so the sum of their
    objectives is minimised jointly by one L-BFGS-B run (one vectorised gradient per step instead
    of a Python-level optimiser call per resample)."""
    n_boot, n = matrices.shape[0], matrices.shape[1]
    x0 = np.tile(np.zeros(n) if start is None else start, n_boot)
    result = optimize.minimize(
        _batch_negative_log_likelihood,
        x0,
        args=(matrices,),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "ftol": 1e-13, "gtol": 1e-7},
    )
    strengths = result.x.reshape(n_boot, n)
    return strengths - strengths.mean(axis=1, keepdims=True)


def wilson(successes, trials, confidence=CONFIDENCE):
    """Wilson score interval of a proportion (scipy's binomtest); (nan, nan) for no trials."""
    if trials == 0:
        return float("nan"), float("nan")
    interval = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(interval.low), float(interval.high)


def outcome_counts(a, b, outcome, n_systems):
    """`(wins, losses, ties)` matrices: `wins[i, j]` decisive wins of i over j, `ties[i, j]` ties."""
    wins = np.zeros((n_systems, n_systems), dtype=int)
    ties = np.zeros((n_systems, n_systems), dtype=int)
    decisive = outcome != 0.5
    winner = np.where(outcome == 1, a, b)[decisive]
    loser = np.where(outcome == 1, b, a)[decisive]
    np.add.at(wins, (winner, loser), 1)
    tied = ~decisive
    np.add.at(ties, (a[tied], b[tied]), 1)
    np.add.at(ties, (b[tied], a[tied]), 1)
    return wins, wins.T.copy(), ties


def matrix_table(names, a, b, outcome):
    """One row per ordered pair of systems that met: wins, losses, ties and the Wilson interval of
    the win share among decisive judgements (ties left out of that share, reported beside it)."""
    n = len(names)
    wins, losses, ties = outcome_counts(a, b, outcome, n)
    rows = []
    for i in range(n):
        for j in range(n):
            total = wins[i, j] + losses[i, j] + ties[i, j]
            if i == j or total == 0:
                continue
            decisive = int(wins[i, j] + losses[i, j])
            low, high = wilson(wins[i, j], decisive)
            rows.append(
                {
                    "system": names[i],
                    "opponent": names[j],
                    "wins": int(wins[i, j]),
                    "losses": int(losses[i, j]),
                    "ties": int(ties[i, j]),
                    "win_rate": float(wins[i, j] / decisive) if decisive else None,
                    "ci_low": None if np.isnan(low) else low,
                    "ci_high": None if np.isnan(high) else high,
                }
            )
    return rows


def adjacent_significance(order, samples, names):
    """For each neighbour pair in the ranking: a two-sided bootstrap p-value that they differ
    (twice the share of resamples in which the lower-ranked system is not below the higher)."""
    rows = []
    for upper, lower in itertools.pairwise(order):
        if len(samples):
            share = float(np.mean(samples[:, lower] >= samples[:, upper]))
            p_value = min(1.0, 2 * share)
        else:
            p_value = None
        rows.append(
            {
                "higher": names[upper],
                "lower": names[lower],
                "p_value": p_value,
                "significant": p_value is not None and p_value < 1 - CONFIDENCE,
            }
        )
    return rows


def ranking(names, context, a, b, outcome, *, n_boot=1000, seed=0):
    """Bradley-Terry systems table (best first), win/tie/loss matrix and adjacent-pair tests."""
    n = len(names)
    point = bradley_terry(win_counts(a, b, outcome, n))
    samples = bootstrap_strengths(context, a, b, outcome, n, n_boot=n_boot, seed=seed, point=point)
    alpha = (1 - CONFIDENCE) / 2
    wins, losses, ties = outcome_counts(a, b, outcome, n)
    order = [int(i) for i in np.argsort(-point, kind="stable")]
    systems = []
    for i in order:
        low, high = np.quantile(samples[:, i], [alpha, 1 - alpha]) if len(samples) else (np.nan, np.nan)
        systems.append(
            {
                "system": names[i],
                "strength": float(point[i]),
                "ci_low": None if np.isnan(low) else float(low),
                "ci_high": None if np.isnan(high) else float(high),
                "wins": int(wins[i].sum()),
                "losses": int(losses[i].sum()),
                "ties": int(ties[i].sum()),
            }
        )
    return {
        "systems": systems,
        "matrix": matrix_table(names, a, b, outcome),
        "adjacent": adjacent_significance(order, samples, names),
        "strengths": point,
    }


def tie_calibrated_accuracy(metric_a, metric_b, human):
    """Pairwise accuracy with tie calibration (Deutsch, Foster & Freitag 2023, "Ties Matter").

    `human`: 1 = a better, 0 = b better, 0.5 = tie. The metric calls a tie when
    |metric_a - metric_b| <= epsilon; a judgement counts as agreed when both say tie, or both
    prefer the same side. Epsilon is the threshold (0, or one of the observed |differences|)
    that maximises accuracy. Returns `(accuracy, epsilon)`; `(None, None)` for no judgements.
    """
    diff = np.asarray(metric_a, float) - np.asarray(metric_b, float)
    human = np.asarray(human, float)
    if diff.size == 0:
        return None, None
    gap = np.abs(diff)
    order = np.argsort(gap, kind="stable")
    gap, diff, human = gap[order], diff[order], human[order]
    human_tie = human == 0.5
    concordant = ~human_tie & (np.sign(diff) == np.where(human == 1, 1.0, -1.0)) & (gap > 0)
    # Thresholds: "no metric ties except exact equality", then every observed gap.
    candidates = np.concatenate([[0.0], np.unique(gap)])
    tie_prefix = np.concatenate([[0], np.cumsum(human_tie)])
    concordant_suffix = np.concatenate([np.cumsum(concordant[::-1])[::-1], [0]])
    called_tie = np.searchsorted(gap, candidates, side="right")  # judgements the metric calls ties
    accuracy = (tie_prefix[called_tie] + concordant_suffix[called_tie]) / gap.size
    best = int(np.argmax(accuracy))  # the first (smallest epsilon) of equally good thresholds
    return float(accuracy[best]), float(candidates[best])


def kendall_tau(x, y):
    """Kendall's tau-b of two rankings' scores; None when undefined (fewer than 2, or constant)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        return None
    tau = stats.kendalltau(x[keep], y[keep]).statistic
    return None if not np.isfinite(tau) else float(tau)
