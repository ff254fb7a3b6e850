#!/usr/bin/env python
"""Benchmark: Arena-scale Bradley-Terry (1,000,000 votes, 100 systems, 1,000 bootstrap resamples).

Generates seeded votes (every vote its own context, as in an arena; true log-strengths drawn
from N(0, 1), about 10% ties), then times `analysis.stats.arena`: the point fit, the 1,000-resample
bootstrap, and the peak memory (tracemalloc's peak of traced allocations, numpy's arrays included,
and the process's peak resident size).

The PEER is a re-implementation, written for this bench from FastChat's published description
of `compute_bt` and `compute_bootstrap_bt` (fastchat/serve/monitor/rating_systems.py): votes
collapsed to unique (a, b, outcome) rows with counts, ratings in log10 units (alpha = ln 10),
L-BFGS-B with the analytic gradient (maxiter 100, gtol 1e-6) for the point fit on the raw counts,
and for the bootstrap `default_rng(0).multinomial(n, counts / n, 1000)` weights divided by n,
one L-BFGS-B fit per resample over a process pool of all CPUs, Elo scale 400 * r + 1000. It is
not FastChat's code (fschat is not a dependency of RateLab); it exists to time the same method
on the same machine and to check that the intervals agree: both draw the same resamples (same
seed, same unique-row order), so their percentile intervals should differ only by the optimisers'
tolerances. Agreement is reported as the largest |difference of an interval end| as a share of
that system's interval width, after converting our natural-log strengths to the Elo scale.

    .venv/bin/python bench/bench_arena.py [--votes 1000000 --systems 100 --bootstrap 1000 --no-peer]
"""

import argparse
import multiprocessing
import os
import resource
import sys
import time
import tracemalloc
from functools import partial
from pathlib import Path

import numpy as np
from scipy import optimize, special

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.stats import arena

TARGET_SECONDS = 10.0


def simulated_votes(n_votes, n_systems, seed=1):
    """`(a, b, outcome, true)`; systems renumbered in order of first appearance in a then b, the
    order in which FastChat's preprocessing (`pd.concat([model_a, model_b]).unique()`) numbers
    them, so both implementations see the same unique-row order."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 1.0, n_systems)
    a = rng.integers(0, n_systems, n_votes)
    b = (a + rng.integers(1, n_systems, n_votes)) % n_systems
    p = 1.0 / (1.0 + np.exp(true[b] - true[a]))
    u = rng.random(n_votes)
    outcome = np.where(u < 0.9 * p, 1.0, np.where(u > 1 - 0.9 * (1 - p), 0.0, 0.5))
    both = np.concatenate([a, b])
    _, first_seen = np.unique(both, return_index=True)
    order = np.argsort(first_seen, kind="stable")  # order[k]: the system seen k-th
    renumber = np.empty(n_systems, dtype=np.int64)
    renumber[order] = np.arange(n_systems)
    return renumber[a], renumber[b], outcome, true[order]


# ---- PEER: FastChat's method, re-implemented for timing and comparison (see the docstring) ----


def peer_preprocess(a, b, outcome):
    schedule = np.column_stack([a, b, np.rint(outcome * 2)]).astype(np.int32)
    rows, counts = np.unique(schedule, return_counts=True, axis=0)
    return rows[:, :2], rows[:, 2].astype(np.float64) / 2.0, counts.astype(np.float64)


def peer_loss_and_grad(ratings, matchups, outcomes, weights, alpha):
    pair = ratings[matchups]
    probs = special.expit(alpha * (pair[:, 0] - pair[:, 1]))
    loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)) * weights).sum()
    per_matchup = -alpha * (outcomes - probs) * weights
    grad = np.zeros_like(ratings)
    np.add.at(grad, matchups, per_matchup[:, None] * np.array([1.0, -1.0]))
    return loss, grad


def peer_fit(matchups, outcomes, weights, n_models, *, alpha, tol=1e-6):
    result = optimize.minimize(
        peer_loss_and_grad,
        np.zeros(n_models),
        args=(matchups, outcomes, weights, alpha),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 100, "gtol": tol},
    )
    return result.x


def peer_point(a, b, outcome, n_models):
    matchups, outcomes, weights = peer_preprocess(a, b, outcome)
    return 400.0 * peer_fit(matchups, outcomes, weights, n_models, alpha=np.log(10.0)) + 1000.0


def _peer_fit_resample(boot_weights, matchups, outcomes, n_models):
    return peer_fit(matchups, outcomes, boot_weights, n_models, alpha=np.log(10.0))


def peer_bootstrap(votes, n_models, n_rounds, seed=0):
    a, b, outcome = votes
    matchups, outcomes, weights = peer_preprocess(a, b, outcome)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n=len(a), pvals=weights / weights.sum(), size=n_rounds)
    boot_weights = draws.astype(np.float64) / len(a)
    fit = partial(_peer_fit_resample, matchups=matchups, outcomes=outcomes, n_models=n_models)
    pool = multiprocessing.Pool(os.cpu_count())
    ratings = np.array(list(pool.imap_unordered(fit, boot_weights)))
    pool.close()
    pool.join()  # the workers reaped, so their CPU time shows in RUSAGE_CHILDREN
    return 400.0 * ratings + 1000.0


# ---- the bench ----


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - started


def cpu_seconds():
    """CPU seconds of this process (all its threads) and of its reaped children (the peer's pool):
    on a shared machine wall time depends on the other users, CPU time much less."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def interval_agreement(ours, theirs):
    """Largest |our interval end - theirs| / their interval width, over systems and both ends."""
    low_ours, high_ours = arena.intervals(ours)
    low_theirs, high_theirs = arena.intervals(theirs)
    width = high_theirs - low_theirs
    return float(max(np.max(np.abs(low_ours - low_theirs) / width), np.max(np.abs(high_ours - high_theirs) / width)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--bootstrap", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-peer", action="store_true", help="skip the FastChat-method peer (about a minute)")
    args = parser.parse_args()
    a, b, outcome, true = simulated_votes(args.votes, args.systems)
    n = args.systems
    print(
        f"{args.votes:,} votes over {n} systems (each vote its own context), {args.bootstrap:,} resamples; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start"
    )

    fits, boots, cpus = [], [], []
    for _ in range(args.repeat):
        _, fit_seconds = timed(arena.point_strengths, a, b, outcome, n)
        cpu_before = cpu_seconds()[0]
        (point, samples), boot_seconds = timed(arena.bootstrap_strengths, a, b, outcome, n, n_boot=args.bootstrap)
        cpus.append(cpu_seconds()[0] - cpu_before)
        fits.append(fit_seconds)
        boots.append(boot_seconds)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tracemalloc.start()
    arena.bootstrap_strengths(a, b, outcome, n, n_boot=args.bootstrap)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    low, high = arena.intervals(samples)
    r = float(np.corrcoef(point, true)[0, 1])
    total = min(boots)
    print(
        f"ours: point fit (unique rows, win matrix, Newton) best {min(fits):.3f} s; fit + {args.bootstrap:,} "
        f"resamples (unique rows, multinomial draws, batched warm-started Newton) best {total:.2f} s, median "
        f"{sorted(boots)[len(boots) // 2]:.2f} s of {args.repeat} (target {TARGET_SECONDS:.0f} s); CPU time "
        f"{min(cpus):.2f} s (two threads: draws beside fits)"
    )
    print(
        f"ours: peak traced memory {traced_peak / 2**20:.0f} MB, process peak RSS {rss_mb:.0f} MB | "
        f"r(strength, true) = {r:.4f}, "
        f"Rank (UB) of the best system {int(arena.rank_upper_bound(low, high)[np.argmax(point)])}"
    )
    if args.no_peer:
        return
    own_before, children_before = cpu_seconds()
    peer_point_elo, peer_fit_seconds = timed(peer_point, a, b, outcome, n)
    peer_samples, peer_boot_seconds = timed(peer_bootstrap, (a, b, outcome), n, args.bootstrap)
    own_after, children_after = cpu_seconds()
    peer_cpu = own_after - own_before + children_after - children_before
    agreement = interval_agreement(arena.to_elo(samples), peer_samples)
    point_gap = float(np.max(np.abs(arena.to_elo(point) - peer_point_elo)))
    print(
        f"PEER (FastChat's compute_bt/compute_bootstrap_bt method, re-implemented here; L-BFGS per resample, "
        f"{os.cpu_count()} processes): point fit {peer_fit_seconds:.2f} s, {args.bootstrap:,} resamples "
        f"{peer_boot_seconds:.2f} s, together {peer_fit_seconds + peer_boot_seconds:.2f} s "
        f"({(peer_fit_seconds + peer_boot_seconds) / total:.1f}x ours); CPU time {peer_cpu:.1f} s "
        f"({peer_cpu / min(cpus):.1f}x ours); load average {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        f"agreement on the Elo scale: largest interval-end difference {agreement:.2%} of the interval width "
        f"(criterion 1%), largest point difference {point_gap:.3f} Elo points"
    )


if __name__ == "__main__":
    main()
