"""Benchmark: recompute a survey's quality report (pairwise kappas, alpha, split-half, rules).

    python bench/quality_recompute.py --size 100000 --annotators 50 [--per-response 5]

Builds a synthetic imported survey of `--size` ratings in the configured database (DATABASE_URL),
times `quality_recompute` (cold, then again with nothing changed) and the cached read, prints one
JSON line, and deletes what it made.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

import numpy as np  # noqa: E402

from annotation.models import Annotator, Aspect, Context, Dataset, Rating, Response, Survey, System  # noqa: E402
from annotation.quality.selectors import agreement_summary  # noqa: E402
from annotation.quality.services import quality_recompute  # noqa: E402


def build(size, n_annotators, per_response, seed):
    rng = np.random.default_rng(seed)
    n_responses = size // per_response
    name = f"bench-quality-{int(time.time())}"
    dataset = Dataset.objects.create(name=name)
    system = System.objects.create(dataset=dataset, name="sys")
    contexts = Context.objects.bulk_create(
        Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"speaker": None, "text": "hi"}])
        for i in range(n_responses)
    )
    responses = Response.objects.bulk_create(Response(context=c, system=system, text="ok") for c in contexts)
    survey = Survey.objects.create(dataset=dataset, name=name, provider=Survey.Provider.IMPORTED, status="closed")
    Aspect.objects.create(survey=survey, key=Aspect.OVERALL)
    annotators = Annotator.objects.bulk_create(
        Annotator(provider="bench", worker_id=f"{name}-w{i}") for i in range(n_annotators)
    )
    careless = set(range(max(1, n_annotators // 10)))  # one in ten answers at random
    truth = rng.integers(1, 6, size=n_responses)
    ratings = []
    for index, response in enumerate(responses):
        for a in rng.choice(n_annotators, size=per_response, replace=False):
            noisy = truth[index] + rng.integers(-1, 2)
            score = int(rng.integers(1, 6)) if a in careless else int(np.clip(noisy, 1, 5))
            ratings.append(Rating(survey=survey, annotator=annotators[a], response=response, score=score))
    Rating.objects.bulk_create(ratings, batch_size=5000)
    return dataset, survey, annotators


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000, help="number of ratings")
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--per-response", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dataset, survey, annotators = build(args.size, args.annotators, args.per_response, args.seed)
    try:
        started = time.perf_counter()
        report = quality_recompute(survey=survey).data
        cold = time.perf_counter() - started
        started = time.perf_counter()
        quality_recompute(survey=survey)
        warm = time.perf_counter() - started
        started = time.perf_counter()
        agreement_summary(survey=survey)
        cached = time.perf_counter() - started
        print(
            json.dumps(
                {
                    "ratings": report["n_ratings"],
                    "annotators": report["n_annotators"],
                    "pairs": len(report["pairs"]),
                    "excluded": report["n_excluded"],
                    "median_kappa": report["median_kappa"],
                    "alpha": report["alpha"],
                    "split_half_pearson": report["split_half"]["pearson"]["mean"],
                    "recompute_s": round(cold, 3),
                    "recompute_again_s": round(warm, 3),
                    "cached_summary_s": round(cached, 4),
                }
            )
        )
    finally:
        dataset.delete()
        Annotator.objects.filter(pk__in=[a.pk for a in annotators]).delete()


if __name__ == "__main__":
    main()
