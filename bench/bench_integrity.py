#!/usr/bin/env python
"""Bench: the crowd-integrity detectors and reliability models on simulated studies with known workers.

Simulates a study (annotation/quality/integrity/simulation.py: 80 workers of whom 48 careful, 8 careless,
5 straight-liners, 12 pasters, 7 copiers; 800 written replies to 60 contexts, 4,000 ratings of 400 items,
3,200 pairwise choices of 300 pairs) per seed, and prints
- precision and recall of each flag against what the simulation knows (per reply for the writing
  flags, per worker for the rating flags), summed over the seeds;
- Spearman's rank correlation between each worker's estimated competence (MACE on the pairwise choices,
  Dawid-Skene on the 1-5 ratings as categories) and the simulated noise (the share of answers that ignore
  the item), negated so that higher is better, beside what an oracle who knew the simulated truth reads
  through the same number of answers (pairs: the share truly right; ratings: the mean distance from the
  latent quality, and the likelihood ceiling: θ by EM knowing each item's quality, the careful spread and
  that ignoring answers are uniform); beside them the shared-confusion spammer model on the ratings
  (spammer_scale.py: one competence per worker, careful raters' near misses learned once for the crowd),
  the ordinal spammer model (ordinal_spammer.py: careful ratings an ordered probit around each item's
  latent value, the one the app's `competence` rule reads on rating scales) and each θ pooled with MACE's
  θ by answers, for workers who both rate and choose. Issue 40's aim from one task alone: met by the
  ordinal model on the ratings (0.824 on seeds 100-104, 0.816 on 200-204; worst seeds 0.802 / 0.777), not
  by MACE on the pairs (at its ceiling); with --sweep, the same as workers give more answers;
- how well the aggregates recover the simulated truth: MACE against the majority vote on the pairs, and
  competence-weighted means against plain means on the ratings (Pearson r with the latent quality), and
  the ordinal model's posterior item values.
Aims (issue 40): recall ≥ 0.9 at precision ≥ 0.9 for pasted and copied replies; rank correlation ≥ 0.8.

    .venv/bin/python bench/bench_integrity.py [--seeds 5] [--first-seed 100] [--sweep 40,60,100]
(--sweep takes choices per worker; ratings per worker are 1.25 times as many: 40,60,100 -> 50,75,125.)
"""

import argparse
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.quality.integrity import rating_flags, similarity, writing_flags
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.normalise import plain_item_scores, weighted_item_scores
from annotation.quality.integrity.ordinal_spammer import ordinal_spammer
from annotation.quality.integrity.simulation import SCALE, CrowdSpec, simulate_crowd
from annotation.quality.integrity.spammer_scale import pooled_competence, spammer_scale

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


def _spearman(estimate, target, workers):
    return float(stats.spearmanr([estimate[w] for w in workers], [target[w] for w in workers]).statistic)


def _auc(score, positive, workers):
    """P(a worker who ignores items scores lower than one who does not): ranks, ties counted half."""
    low = [score[w] for w in workers if positive[w]]
    high = [score[w] for w in workers if not positive[w]]
    if not low or not high:
        return float("nan")
    wins = sum((h > lo) + 0.5 * (h == lo) for lo in low for h in high)
    return wins / (len(low) * len(high))


def oracle_competence(study):
    """What a judge who knew the simulated truth would estimate: the share of a worker's choices that
    picked the better reply, and minus their mean distance from the latent quality. The ceiling that
    any model sees through a worker's finite number of answers."""
    right, choices = Counter(), Counter()
    for worker, pair, chosen in study.choices:
        choices[worker] += 1
        right[worker] += chosen == study.pair_winner[pair]
    distance, ratings = Counter(), Counter()
    for worker, item, score in study.ratings:
        ratings[worker] += 1
        distance[worker] += abs(score - study.item_quality[item])
    return ({w: right[w] / choices[w] for w in choices}, {w: -distance[w] / ratings[w] for w in ratings})


def likelihood_oracle(study, spread=0.6, iterations=300):
    """θ by EM for a judge who knows every item's latent quality, the careful raters' spread (0.6, the
    simulation's) and that ignoring answers are uniform, so only which answers ignored the item is unknown:
    the ceiling of a rating model, which the distance from the truth is not (it weighs a careful near miss
    and a random answer by distance alone)."""
    cells = {}
    for worker, item, score in study.ratings:
        quality = study.item_quality[item]
        upper = 1.0 if score == SCALE[-1] else stats.norm.cdf((score + 0.5 - quality) / spread)
        lower = 0.0 if score == SCALE[0] else stats.norm.cdf((score - 0.5 - quality) / spread)
        cells.setdefault(worker, []).append(upper - lower)
    competence = {}
    for worker, cell_list in cells.items():
        likelihood, theta = np.array(cell_list), 0.7
        for _ in range(iterations):
            theta = float(np.mean(theta * likelihood / (theta * likelihood + (1 - theta) / len(SCALE))))
        competence[worker] = theta
    return competence


def competence_figures(study):
    noise = {w.worker: -w.noise for w in study.workers}  # higher is better, as competence
    ignores = {w.worker: w.role in IGNORES_ITEMS for w in study.workers}
    workers = sorted(noise)
    fitted_mace = mace(study.choices, labels=["A", "B"], seed=0)
    fitted_ds = dawid_skene(study.ratings, labels=list(SCALE))
    ds_closeness = {w: -d for w, d in fitted_ds.expected_distance.items()}
    fitted_spam = spammer_scale(study.ratings, labels=list(SCALE))
    fitted_ordinal = ordinal_spammer(study.ratings, labels=list(SCALE))
    # MACE's θ and the spammer model's θ estimate the same thing (the share of a worker's answers that
    # follow the item), so they pool, each weighted by the answers it rests on.
    pooled = pooled_competence(
        [
            (fitted_mace.competence, Counter(w for w, _, _ in study.choices)),
            (fitted_spam.competence, Counter(w for w, _, _ in study.ratings)),
        ]
    )
    pooled_ordinal = pooled_competence(
        [
            (fitted_mace.competence, Counter(w for w, _, _ in study.choices)),
            (fitted_ordinal.competence, Counter(w for w, _, _ in study.ratings)),
        ]
    )
    oracle_choices, oracle_ratings = oracle_competence(study)
    return (
        {
            "ordinal_rho": _spearman(fitted_ordinal.competence, noise, workers),
            "pooled_ordinal_rho": _spearman(pooled_ordinal, noise, workers),
            "ordinal_auc": _auc(fitted_ordinal.competence, ignores, workers),
            "oracle_likelihood_rho": _spearman(likelihood_oracle(study), noise, workers),
            "spam_rho": _spearman(fitted_spam.competence, noise, workers),
            "pooled_rho": _spearman(pooled, noise, workers),
            "spam_auc": _auc(fitted_spam.competence, ignores, workers),
            "mace_rho": _spearman(fitted_mace.competence, noise, workers),
            "ds_accuracy_rho": _spearman(fitted_ds.competence, noise, workers),
            "ds_distance_rho": _spearman(ds_closeness, noise, workers),
            "oracle_choices_rho": _spearman(oracle_choices, noise, workers),
            "oracle_ratings_rho": _spearman(oracle_ratings, noise, workers),
            "mace_auc": _auc(fitted_mace.competence, ignores, workers),
            "ds_auc": _auc(ds_closeness, ignores, workers),
        },
        fitted_mace,
        fitted_ds,
        fitted_ordinal,
    )


def aggregate_figures(study, fitted_mace, fitted_ds, fitted_ordinal):
    majority = {}
    for _, pair, chosen in study.choices:
        majority.setdefault(pair, Counter())[chosen] += 1
    quality = study.item_quality
    items = sorted(quality)
    plain = plain_item_scores(study.ratings)
    weighted = weighted_item_scores(study.ratings, fitted_ds.competence)
    ordinal_weighted = weighted_item_scores(study.ratings, fitted_ordinal.competence)

    def r(scores):
        return float(np.corrcoef([scores[i] for i in items], [quality[i] for i in items])[0, 1])

    return {
        "majority_pairs_right": float(
            np.mean([v.most_common(1)[0][0] == study.pair_winner[p] for p, v in majority.items()])
        ),
        "mace_pairs_right": float(np.mean([fitted_mace.predicted[p] == study.pair_winner[p] for p in majority])),
        "plain_mean_r": r(plain),
        "weighted_mean_r": r(weighted),
        "ordinal_weighted_mean_r": r(ordinal_weighted),
        "ordinal_values_r": r(fitted_ordinal.item_values),
    }


COMPETENCE_LINES = (
    ("mace_rho", "MACE θ (pairwise choices)"),
    ("oracle_choices_rho", "  ceiling: share truly right"),
    ("ds_accuracy_rho", "Dawid-Skene accuracy (1-5)"),
    ("ds_distance_rho", "Dawid-Skene expected distance"),
    ("oracle_ratings_rho", "  oracle: distance from truth"),
    ("oracle_likelihood_rho", "  ceiling: likelihood, truth known"),
    ("spam_rho", "spammer model θ (1-5, shared C)"),
    ("ordinal_rho", "ordinal spammer model θ (1-5)"),
    ("pooled_rho", "pooled θ (MACE + spammer model)"),
    ("pooled_ordinal_rho", "pooled θ (MACE + ordinal model)"),
)


def sweep(sizes, seeds, first_seed):
    """Competence rank correlation as workers give more answers (the study otherwise unchanged)."""
    print(
        "competence vs noise as answers per worker grow (pairwise choices; ratings 1.25 times as many), "
        f"mean over {seeds} seeds:"
    )
    print(
        f"  {'choices':>7} {'MACE':>6} {'ceiling':>7} {'ratings':>7} {'DS dist':>7} {'DS acc':>6} {'spam θ':>6} "
        f"{'ord. θ':>6} {'oracle':>6} {'ceiling':>7}"
    )
    for size in sizes:
        spec = replace(CrowdSpec(), pairs_per_worker=size, ratings_per_worker=round(1.25 * size))
        rows = [
            competence_figures(simulate_crowd(spec, seed=seed))[0] for seed in range(first_seed, first_seed + seeds)
        ]
        mean = {key: np.mean([row[key] for row in rows]) for key in rows[0]}
        print(
            f"  {size:>7} {mean['mace_rho']:>6.3f} {mean['oracle_choices_rho']:>7.3f} {spec.ratings_per_worker:>7} "
            f"{mean['ds_distance_rho']:>7.3f} {mean['ds_accuracy_rho']:>6.3f} {mean['spam_rho']:>6.3f} "
            f"{mean['ordinal_rho']:>6.3f} {mean['oracle_ratings_rho']:>6.3f} {mean['oracle_likelihood_rho']:>7.3f}"
        )


def print_flag_table(per_seed):
    """Precision and recall pooled over the seeds, and the lowest of any one seed."""
    print(f"{'flag':<22} {'unit':<7} {'precision':>9} {'recall':>7} {'positives':>9} {'worst seed P / R':>17}  aim")
    for name in (*REPLY_FLAGS, *WORKER_FLAGS):
        precision, recall, positives = precision_recall(sum((c[name] for c in per_seed), Counter()))
        seeds = [precision_recall(c[name]) for c in per_seed]
        worst_p, worst_r = min(p for p, _, _ in seeds), min(r for _, r, _ in seeds)
        unit = "reply" if name in REPLY_FLAGS else "worker"
        aim = ("met" if precision >= 0.9 and recall >= 0.9 else "MISSED") if name in AIMED else ""
        print(
            f"{name:<22} {unit:<7} {precision:>9.3f} {recall:>7.3f} {positives:>9} "
            f"{worst_p:>8.3f} / {worst_r:.3f}  {aim}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    # Thresholds were set on seeds 0-4; the figures are reported on others.
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--sweep", default="", help="answers per worker to sweep, e.g. 40,100,200 (slow)")
    args = parser.parse_args()
    per_seed = []  # one {flag: Counter of (raised, truly) pairs} per seed
    correlations = []
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        study = simulate_crowd(seed=seed)
        counts = {name: Counter() for name in (*REPLY_FLAGS, *WORKER_FLAGS)}
        flags = reply_flags(study)
        for reply in study.replies:
            for name, caught in REPLY_FLAGS.items():
                confusion(counts[name], _raised(flags[reply["answer"]][name]), reply["truth"] & caught)
        roles = {w.worker: w.role for w in study.workers}
        for worker, raised in worker_flags(study).items():
            for name, caught in WORKER_FLAGS.items():
                confusion(counts[name], raised.get(name, False), roles[worker] in caught)
        per_seed.append(counts)
        figures, *fitted = competence_figures(study)
        correlations.append(figures | aggregate_figures(study, *fitted))
    elapsed = time.perf_counter() - started
    last = args.first_seed + args.seeds - 1
    print(f"{args.seeds} simulated studies (seeds {args.first_seed}-{last}) in {elapsed:.1f} s")
    print_flag_table(per_seed)
    print("competence vs simulated noise, Spearman (mean, min over seeds; aim ≥ 0.8):")
    for key, label in COMPETENCE_LINES:
        values = [c[key] for c in correlations]
        print(f"  {label:<34} {np.mean(values):.3f}  {min(values):.3f}")
    print("competence separating careless and straight-lining workers from the rest, AUC (mean over seeds):")
    print(f"  {'MACE θ':<32} {np.mean([c['mace_auc'] for c in correlations]):.3f}")
    print(f"  {'Dawid-Skene expected distance':<32} {np.mean([c['ds_auc'] for c in correlations]):.3f}")
    print(f"  {'spammer model θ':<32} {np.mean([c['spam_auc'] for c in correlations]):.3f}")
    print(f"  {'ordinal spammer model θ':<32} {np.mean([c['ordinal_auc'] for c in correlations]):.3f}")
    print("aggregates (mean over seeds):")
    for key, label in (
        ("majority_pairs_right", "pairs right, majority vote"),
        ("mace_pairs_right", "pairs right, MACE"),
        ("plain_mean_r", "r(plain mean, quality)"),
        ("weighted_mean_r", "r(DS-weighted mean, quality)"),
        ("ordinal_weighted_mean_r", "r(ordinal-θ-weighted mean)"),
        ("ordinal_values_r", "r(ordinal item values, quality)"),
    ):
        print(f"  {label:<32} {np.mean([c[key] for c in correlations]):.3f}")
    if args.sweep:
        sweep([int(size) for size in args.sweep.split(",")], args.seeds, args.first_seed)


if __name__ == "__main__":
    main()
