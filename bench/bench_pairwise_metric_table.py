#!/usr/bin/env python
"""Benchmark: the pairwise section's metric table (every metric's tie-calibrated pairwise accuracy
and Kendall tau) over 50,000 judgements of 20 systems and 20 metrics.

The report's pairwise filter-sensitivity audit computes this table once for every distinct set of
kept annotators (up to 17 per report), so its cost multiplies. Simulated judgements over 2,000
contexts; each metric scores about 95% of the responses.

    .venv/bin/python bench/bench_pairwise_metric_table.py [--judgements 50000 --systems 20 --metrics 20]
"""

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from analysis.sections.pairwise import metric_table  # noqa: E402
from analysis.sections.pairwise_sensitivity import _ranking  # noqa: E402

TARGET_SECONDS = 1.0


def simulated(n, n_systems, n_contexts, n_metrics, seed=1):
    rng = np.random.default_rng(seed)
    context = rng.integers(0, n_contexts, n)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    winner = rng.choice(["a", "b", "tie"], n, p=[0.45, 0.45, 0.1])
    rows = [
        (int(c), f"s{x:02d}", f"s{y:02d}", int(c * n_systems + x), int(c * n_systems + y), str(w), 1, True)
        for c, x, y, w in zip(context, a, b, winner, strict=True)
    ]
    responses = range(n_contexts * n_systems)
    scores = {
        f"metric{m:02d}": {r: float(rng.random()) for r in responses if rng.random() < 0.95} for m in range(n_metrics)
    }
    return rows, scores


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgements", type=int, default=50_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--contexts", type=int, default=2_000)
    parser.add_argument("--metrics", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows, scores = simulated(args.judgements, args.systems, args.contexts, args.metrics)
    names, strengths = _ranking(rows)
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        table, _epsilons = metric_table(rows, names, strengths, scores)
        times.append(time.perf_counter() - started)
    best = min(times)
    print(
        f"Pairwise metric table, {args.judgements} judgements, {args.systems} systems, {args.metrics} metrics: "
        f"best {best:.2f} s of {args.repeat} (target {TARGET_SECONDS:.0f} s, {best / TARGET_SECONDS:.2f} of it) | "
        f"{len(table)} metrics, {table[0]['n_pairs'] if table else 0} pairs for the first"
    )


if __name__ == "__main__":
    main()
