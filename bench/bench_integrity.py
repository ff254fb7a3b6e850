#!/usr/bin/env python
"""Bench: the crowd-integrity detectors and reliability models on simulated studies with known workers.

Simulates a study (annotation/quality/integrity/simulation.py: 80 workers of whom 48 careful, 8 careless,
5 straight-liners, 12 pasters, 7 copiers; 800 written replies to 60 contexts, 4,000 ratings of 400 items,
3,200 pairwise choices of 300 pairs) per seed, and prints
- precision and recall of each flag against what the simulation knows (per reply for the writing
  flags, per worker for the rating flags), summed over the seeds;
- Spearman's rank correlation between each worker's estimated competence (MACE on the pairwise choices,
  Dawid-Skene on the 1-5 ratings as categories) and the simulated noise (the share of answers that ignore
  the item), negated so that higher is better;
- how well the aggregates recover the simulated truth: MACE against the majority vote on the pairs, and
  competence-weighted means against plain means on the ratings (Pearson r with the latent quality).
Aims (issue 40): recall ≥ 0.9 at precision ≥ 0.9 for pasted and copied replies; rank correlation ≥ 0.8.

    .venv/bin/python bench/bench_integrity.py [--seeds 5]
"""

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.quality.integrity import rating_flags, similarity, writing_flags
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.normalise import plain_item_scores, weighted_item_scores
from annotation.quality.integrity.simulation import SCALE, simulate_crowd

# Each flag, and what the simulation knows that it should catch.
REPLY_FLAGS = {
    writing_flags.MOSTLY_PASTED: {"pasted"},
    writing_flags.TYPED_TOO_FAST: {"auto_typed"},
    writing_flags.LENGTH_BEYOND_TYPED: {"injected"},
    similarity.NEAR_DUPLICATE: {"copied"},
    "any writing flag": {"pasted", "auto_typed", "injected", "copied"},
}
IGNORES_ITEMS = {"careless", "straight_liner"}
WORKER_FLAGS = {
    rating_flags.STRAIGHT_LINING: {"straight_liner"},
    rating_flags.NEAR_ZERO_VARIANCE: {"straight_liner"},
    rating_flags.ONE_SIDE_ALWAYS: {"straight_liner"},
    rating_flags.TOO_FAST: IGNORES_ITEMS,
    rating_flags.FAR_FROM_CONSENSUS: IGNORES_ITEMS,
}
AIMED = {writing_flags.MOSTLY_PASTED, similarity.NEAR_DUPLICATE}


def reply_flags(study):
    flags = {r["answer"]: writing_flags.telemetry_flags(r["telemetry"]) for r in study.replies}
    for answer, flag in similarity.near_duplicate_flags(study.written_answers()).items():
        flags[answer][flag.name] = flag
    for answer_flags in flags.values():
        answer_flags["any writing flag"] = any(f.raised for f in answer_flags.values())
    return flags


def worker_flags(study):
    by_worker = {}
    for worker, _, score in study.ratings:
        by_worker.setdefault(worker, []).append(score)
    flags = {w.worker: {} for w in study.workers}
    for worker, scores in by_worker.items():
        flags[worker][rating_flags.STRAIGHT_LINING] = rating_flags.straight_lining(scores).raised
        flags[worker][rating_flags.NEAR_ZERO_VARIANCE] = rating_flags.near_zero_variance(scores).raised
    for worker, sides in study.sides.items():
        flags[worker][rating_flags.ONE_SIDE_ALWAYS] = rating_flags.one_side_always(sides).raised
    for worker, flag in rating_flags.too_fast(study.rating_seconds).items():
        flags[worker][rating_flags.TOO_FAST] = flag.raised
    for worker, flag in rating_flags.far_from_consensus(study.ratings).items():
        flags[worker][rating_flags.FAR_FROM_CONSENSUS] = flag.raised
    return flags


def _raised(value):
    return value if isinstance(value, bool) else value.raised


def confusion(counts, predicted, actual):
    counts[(bool(predicted), bool(actual))] += 1


def precision_recall(counts):
    tp, fp, fn = counts[(True, True)], counts[(True, False)], counts[(False, True)]
    return (tp / (tp + fp) if tp + fp else float("nan")), (tp / (tp + fn) if tp + fn else float("nan")), tp + fn


def competence_correlations(study):
    noise = {w.worker: w.noise for w in study.workers}
    fitted_mace = mace(study.choices, labels=["A", "B"], seed=0)
    fitted_ds = dawid_skene(study.ratings, labels=list(SCALE))
    workers = sorted(noise)

    def rho(estimate, higher_is_better=True):
        values = [estimate[w] if higher_is_better else -estimate[w] for w in workers]
        return float(stats.spearmanr(values, [-noise[w] for w in workers]).statistic)

    majority = {}
    for _, pair, chosen in study.choices:
        majority.setdefault(pair, Counter())[chosen] += 1
    majority_right = np.mean([votes.most_common(1)[0][0] == study.pair_winner[p] for p, votes in majority.items()])
    mace_right = np.mean([fitted_mace.predicted[p] == study.pair_winner[p] for p in majority])
    quality = study.item_quality
    items = sorted(quality)
    plain = plain_item_scores(study.ratings)
    weighted = weighted_item_scores(study.ratings, fitted_ds.competence)
    return {
        "mace_rho": rho(fitted_mace.competence),
        "ds_accuracy_rho": rho(fitted_ds.competence),
        "ds_distance_rho": rho(fitted_ds.expected_distance, higher_is_better=False),
        "majority_pairs_right": float(majority_right),
        "mace_pairs_right": float(mace_right),
        "plain_mean_r": float(np.corrcoef([plain[i] for i in items], [quality[i] for i in items])[0, 1]),
        "weighted_mean_r": float(np.corrcoef([weighted[i] for i in items], [quality[i] for i in items])[0, 1]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    # Thresholds were set on seeds 0-4; the figures are reported on others.
    parser.add_argument("--first-seed", type=int, default=100)
    args = parser.parse_args()
    reply_counts = {name: Counter() for name in REPLY_FLAGS}
    worker_counts = {name: Counter() for name in WORKER_FLAGS}
    correlations = []
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        study = simulate_crowd(seed=seed)
        flags = reply_flags(study)
        for reply in study.replies:
            for name, caught in REPLY_FLAGS.items():
                confusion(reply_counts[name], _raised(flags[reply["answer"]][name]), reply["truth"] & caught)
        roles = {w.worker: w.role for w in study.workers}
        for worker, raised in worker_flags(study).items():
            for name, caught in WORKER_FLAGS.items():
                confusion(worker_counts[name], raised.get(name, False), roles[worker] in caught)
        correlations.append(competence_correlations(study))
    elapsed = time.perf_counter() - started
    last = args.first_seed + args.seeds - 1
    print(f"{args.seeds} simulated studies (seeds {args.first_seed}-{last}) in {elapsed:.1f} s")
    print(f"{'flag':<22} {'unit':<7} {'precision':>9} {'recall':>7} {'positives':>9}  aim")
    for unit, counts in (("reply", reply_counts), ("worker", worker_counts)):
        for name, table in counts.items():
            precision, recall, positives = precision_recall(table)
            aim = ""
            if name in AIMED:
                aim = "met" if precision >= 0.9 and recall >= 0.9 else "MISSED"
            print(f"{name:<22} {unit:<7} {precision:>9.3f} {recall:>7.3f} {positives:>9}  {aim}")
    print("competence vs simulated noise, Spearman (mean, min over seeds; aim ≥ 0.8):")
    for key, label in (("mace_rho", "MACE θ (pairwise choices)"), ("ds_accuracy_rho", "Dawid-Skene accuracy (1-5)"),
                       ("ds_distance_rho", "Dawid-Skene expected distance")):
        values = [c[key] for c in correlations]
        print(f"  {label:<32} {np.mean(values):.3f}  {min(values):.3f}")
    print("aggregates (mean over seeds):")
    for key, label in (("majority_pairs_right", "pairs right, majority vote"),
                       ("mace_pairs_right", "pairs right, MACE"),
                       ("plain_mean_r", "r(plain mean, quality)"),
                       ("weighted_mean_r", "r(DS-weighted mean, quality)")):
        print(f"  {label:<32} {np.mean([c[key] for c in correlations]):.3f}")


if __name__ == "__main__":
    main()
