#!/usr/bin/env python
"""Benchmark: Bradley-Terry with 1,000 bootstrap resamples over 50,000 judgements of 20 systems.

Simulated judgements (true log-strengths evenly spread over [-1.5, 1.5], about 10% ties) over
5,000 contexts; times `analysis.stats.pairwise.ranking` (point fit, the joint bootstrap fit over
contexts, the win matrix with Wilson intervals and the adjacent-pair tests) against the 5 s
target, and checks the fit recovers the simulated order.

    .venv/bin/python bench/bench_pairwise_bt.py [--judgements 50000 --systems 20 --bootstrap 1000]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.stats import pairwise

TARGET_SECONDS = 5.0


def simulated(n, n_systems, n_contexts, seed=1):
    rng = np.random.default_rng(seed)
    true = np.linspace(-1.5, 1.5, n_systems)
    context = rng.integers(0, n_contexts, n)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    p = 1 / (1 + np.exp(true[b] - true[a]))
    u = rng.random(n)
    outcome = np.where(u < 0.9 * p, 1.0, np.where(u > 1 - 0.9 * (1 - p), 0.0, 0.5))
    return context, a, b, outcome, true


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=50_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--contexts", type=int, default=5_000)
    parser.add_argument("--bootstrap", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    context, a, b, outcome, true = simulated(args.judgements, args.systems, args.contexts)
    names = [f"s{i:02d}" for i in range(args.systems)]
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = pairwise.ranking(names, context, a, b, outcome, n_boot=args.bootstrap, seed=0)
        times.append(time.perf_counter() - started)
    order_ok = [row["system"] for row in result["systems"]] == names[::-1]
    r = float(np.corrcoef(result["strengths"], true)[0, 1])
    best = min(times)
    print(
        f"Bradley-Terry, {args.judgements} judgements, {args.systems} systems, {args.contexts} contexts, "
        f"{args.bootstrap} bootstrap resamples: best {best:.2f} s, median {sorted(times)[len(times) // 2]:.2f} s "
        f"of {args.repeat} (target {TARGET_SECONDS:.0f} s, {best / TARGET_SECONDS:.2f} of it) | "
        f"order recovered: {order_ok}, r(strength, true) = {r:.4f}"
    )


if __name__ == "__main__":
    main()
