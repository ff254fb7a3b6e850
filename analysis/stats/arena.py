"""Bradley-Terry rankings at Chatbot-Arena scale (a million votes, a hundred systems): numpy and
scipy only, no Django.

Votes come as parallel arrays as in `analysis.stats.pairwise`: `a`, `b` (system indices 0..S-1)
and `outcome` (1 = a won, 0 = b won, 0.5 = tie; ties count half a win for each side).

Why not `pairwise.ranking`: its bootstrap resamples contexts and builds a contexts x S^2 matrix;
in an arena every vote is its own context, so that matrix would be 10^6 x 10^4. Here, as in
FastChat's `compute_bootstrap_bt`, the votes are collapsed to their unique (a, b, outcome) rows
with counts, a resample is one multinomial draw of those counts (the same draws as FastChat's for
the same seed, so the intervals are comparable to theirs), and the likelihood depends on a
resample only through its S x S win matrix. Each block of resamples is then fitted at once by
Newton's method on the stacked win matrices (a batched S x S solve per step), warm-started at the
point estimate, so 1,000 resamples cost a few Newton steps instead of 1,000 optimiser runs.

Strengths are natural-log strengths centred to mean 0: P(i beats j) = 1 / (1 + exp(s_j - s_i)).
`to_elo` converts them to the Elo-like scale of the Arena leaderboard (FastChat: SCALE = 400,
BASE = 10, INIT = 1000): rating = INIT + SCALE * s / ln(BASE).
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse
from threadpoolctl import threadpool_limits

from analysis.stats.pairwise import RIDGE, outcome_counts

CONFIDENCE = 0.95
ELO_SCALE, ELO_BASE, ELO_INIT = 400.0, 10.0, 1000.0
BLOCK = 200  # resamples fitted together: 200 x S^2 floats, ~16 MB per array at S = 100
MAX_NEWTON_STEP = 1.0  # largest change of one strength per step: Newton from far away can overshoot


def unique_outcomes(a, b, outcome, n_systems):
    """`(first, second, outcome, counts)` of the distinct (a, b, outcome) rows, in lexicographic
    order of (a, b, outcome) (the order FastChat's `np.unique(..., axis=0)` gives, which fixes
    which category each multinomial draw lands in)."""
    halves = np.rint(np.asarray(outcome, dtype=float) * 2).astype(np.int64)  # 0, 1 (tie), 2
    code = (np.asarray(a, dtype=np.int64) * n_systems + np.asarray(b, dtype=np.int64)) * 3 + halves
    codes, counts = np.unique(code, return_counts=True)
    pair, halves = np.divmod(codes, 3)
    first, second = np.divmod(pair, n_systems)
    return first, second, halves / 2.0, counts


def _win_map(first, second, outcome, n_systems):
    """Sparse (rows x S^2) map from unique-row counts to the flattened win matrix: a row adds
    `outcome` to W[a, b] and `1 - outcome` to W[b, a]."""
    rows = np.arange(first.size)
    return sparse.csr_matrix(
        (
            np.concatenate([outcome, 1.0 - outcome]),
            (np.concatenate([rows, rows]), np.concatenate([first * n_systems + second, second * n_systems + first])),
        ),
        shape=(first.size, n_systems * n_systems),
    )


def fit_strengths(wins, start=None, *, ridge=RIDGE, tol=1e-9, max_iter=100):
    """Bradley-Terry log-strengths (mean 0) of one `(S, S)` or many `(B, S, S)` win matrices.

    Newton's method on the log-likelihood sum W_ij log P(i beats j) - ridge * sum s^2. Its
    negative Hessian is the graph Laplacian L of the weights N_ij p_ij p_ji (N = W + W^T) plus
    2 ridge I; the likelihood does not change when all strengths shift, so L alone is singular
    along the all-ones vector, and we solve (L + 11^T) d = gradient instead: the gradient sums to
    zero, so the step keeps the mean of the strengths where it was (0 from the default start).
    """
    wins = np.asarray(wins, dtype=float)
    single = wins.ndim == 2
    wins = wins[None] if single else wins
    n_batch, n = wins.shape[0], wins.shape[1]
    totals = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    strengths = np.zeros((n_batch, n)) if start is None else np.array(np.broadcast_to(start, (n_batch, n)), dtype=float)
    strengths -= strengths.mean(axis=1, keepdims=True)
    ones = np.ones((n, n))
    diagonal = np.arange(n)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(strengths[:, None, :] - strengths[:, :, None]))  # P(i beats j)
        gradient = won - (totals * p).sum(axis=2) - 2 * ridge * strengths
        weights = totals * p * (1.0 - p)
        system = ones - weights
        system[:, diagonal, diagonal] += weights.sum(axis=2) + 2 * ridge  # the sum's own w_ii cancels the -w_ii
        step = np.linalg.solve(system, gradient[:, :, None])[:, :, 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, MAX_NEWTON_STEP / np.maximum(largest, 1e-300))
        strengths += step
        if largest.max() < tol:
            break
    strengths -= strengths.mean(axis=1, keepdims=True)
    return strengths[0] if single else strengths


def point_strengths(a, b, outcome, n_systems):
    """Bradley-Terry log-strengths (mean 0) of all votes: the unique rows' win matrix, fitted."""
    first, second, halves, counts = unique_outcomes(a, b, outcome, n_systems)
    wins = _win_map(first, second, halves, n_systems).T @ counts.astype(float)
    return fit_strengths(np.asarray(wins).reshape(n_systems, n_systems))


def bootstrap_strengths(a, b, outcome, n_systems, *, n_boot=1000, seed=0, block=BLOCK):
    """`(point, samples)`: the point strengths and `(n_boot, S)` strengths of multinomial
    resamples of the votes (each resample draws `len(a)` votes with replacement).

    The draws are FastChat's: `default_rng(seed).multinomial(n_votes, counts / n_votes, n_boot)`
    over the unique rows in `unique_outcomes` order; drawing them `block` rows at a time gives the
    same numbers (the generator fills the rows in sequence) and bounds the memory.
    """
    first, second, halves, counts = unique_outcomes(a, b, outcome, n_systems)
    mapping = _win_map(first, second, halves, n_systems)
    n_votes = int(counts.sum())
    point = fit_strengths(np.asarray(mapping.T @ counts.astype(float)).reshape(n_systems, n_systems))
    samples = np.empty((n_boot, n_systems))
    rng = np.random.default_rng(seed)
    shares = counts / n_votes
    starts = list(range(0, n_boot, block))
    sizes = [min(block, n_boot - start) for start in starts]
    # The multinomial draws (most of the time) run in one background thread, in order, so the
    # generator's stream is unchanged, while this thread fits the previous block: numpy releases
    # the GIL in both. BLAS is held to one thread: 100 x 100 solves gain nothing from more, and on
    # a busy machine its spinning threads made the fits a hundred times slower (measured).
    with ThreadPoolExecutor(max_workers=1) as drawer, threadpool_limits(limits=1, user_api="blas"):
        pending = drawer.submit(rng.multinomial, n_votes, shares, sizes[0]) if starts else None
        for index, start in enumerate(starts):
            draws = pending.result().astype(float)
            if index + 1 < len(starts):
                pending = drawer.submit(rng.multinomial, n_votes, shares, sizes[index + 1])
            wins = np.asarray((mapping.T @ draws.T).T).reshape(sizes[index], n_systems, n_systems)
            samples[start : start + sizes[index]] = fit_strengths(wins, start=point)
    return point, samples


def to_elo(strengths, *, scale=ELO_SCALE, base=ELO_BASE, init=ELO_INIT):
    """Log-strengths on the Arena's Elo-like scale (FastChat's `scale_and_offset` without an
    anchor model): a difference of `scale` points means `base` times the odds of winning."""
    return init + scale * np.asarray(strengths, dtype=float) / np.log(base)


def rank_upper_bound(low, high):
    """Arena's Rank (UB): 1 + the number of systems whose lower bound is above this one's upper
    bound (the best rank the data cannot rule out)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return 1 + (low[None, :] > high[:, None]).sum(axis=1)


def intervals(samples, confidence=CONFIDENCE):
    """Percentile intervals per system (linear interpolation, as pandas' `quantile`)."""
    alpha = (1 - confidence) / 2
    low, high = np.quantile(samples, [alpha, 1 - alpha], axis=0)
    return low, high


def arena_ranking(names, a, b, outcome, *, n_boot=1000, seed=0, scale="log", confidence=CONFIDENCE):
    """Systems best first: strength, percentile interval, Rank (UB), votes, wins, losses, ties.

    `scale`: "log" (natural-log strengths, mean 0) or "elo" (see `to_elo`).
    """
    n = len(names)
    a, b, outcome = np.asarray(a), np.asarray(b), np.asarray(outcome, dtype=float)
    point, samples = bootstrap_strengths(a, b, outcome, n, n_boot=n_boot, seed=seed)
    if scale == "elo":
        point, samples = to_elo(point), to_elo(samples)
    elif scale != "log":
        raise ValueError(f"unknown scale {scale!r}: 'log' or 'elo'")
    low, high = intervals(samples, confidence) if n_boot else (np.full(n, np.nan), np.full(n, np.nan))
    ranks = rank_upper_bound(low, high) if n_boot else np.full(n, 0)
    wins, losses, ties = outcome_counts(a, b, outcome, n)
    order = np.argsort(-point, kind="stable")
    return [
        {
            "system": names[i],
            "strength": float(point[i]),
            "ci_low": None if np.isnan(low[i]) else float(low[i]),
            "ci_high": None if np.isnan(high[i]) else float(high[i]),
            "rank_ub": int(ranks[i]) if n_boot else None,
            "votes": int(wins[i].sum() + losses[i].sum() + ties[i].sum()),
            "wins": int(wins[i].sum()),
            "losses": int(losses[i].sum()),
            "ties": int(ties[i].sum()),
        }
        for i in order
    ]
