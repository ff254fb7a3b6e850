"""A synthetic study for benchmarks: rows inserted in bulk, values with realistic structure."""

import numpy as np
from django.contrib.auth import get_user_model

from annotation.models import Annotator, Aspect, Context, Dataset, Rating, Reference, Response, Survey, System
from scoring.models import MetricScore

BATCH = 5000


def build_study(*, n_ratings, n_responses, n_metrics, n_systems=10, n_annotators=200, seed=0):
    """Dataset with n_responses responses (n_systems per context), n_ratings 1-5 ratings spread
    evenly over the responses, and n_metrics metric scores per response, correlated with quality.
    Returns (dataset, owner)."""
    rng = np.random.default_rng(seed)
    owner, _ = get_user_model().objects.get_or_create(username="bench-owner")
    dataset = Dataset.objects.create(name=f"bench-{n_responses}-{n_ratings}", owner=owner)
    n_contexts = max(1, n_responses // n_systems)
    contexts = Context.objects.bulk_create(
        [Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"text": "hi"}]) for i in range(n_contexts)],
        batch_size=BATCH,
    )
    Reference.objects.bulk_create(
        [Reference(context=c, position=0, text=" ".join(["word"] * int(rng.integers(3, 15)))) for c in contexts],
        batch_size=BATCH,
    )
    systems = [System.objects.create(dataset=dataset, name=f"system{s}") for s in range(n_systems)]
    responses = []
    for i in range(n_responses):
        responses.append(
            Response(
                context=contexts[i % n_contexts],
                system=systems[(i // n_contexts) % n_systems],
                text=" ".join(["token"] * int(rng.integers(1, 25))),
            )
        )
    responses = Response.objects.bulk_create(responses, batch_size=BATCH)
    quality = rng.normal(0, 1, n_responses) + np.array([r.system_id % n_systems for r in responses]) * 0.1
    # Random annotators sharing ~10 items per pair often fall below kappa 0.2; the threshold is
    # lowered so the report is timed over every rating (bench/quality_recompute.py times exclusions).
    survey = Survey.objects.create(
        dataset=dataset, name=f"bench-survey-{dataset.pk}", owner=owner, provider="imported", kappa_threshold=-1.0
    )
    Aspect.objects.create(survey=survey, key="overall")
    annotators = Annotator.objects.bulk_create(
        [Annotator(provider="imported", worker_id=f"bench-{dataset.pk}-{a}") for a in range(n_annotators)]
    )
    per_response = max(1, n_ratings // n_responses)
    ratings = []
    for i, response in enumerate(responses):
        chosen = rng.choice(n_annotators, size=min(per_response, n_annotators), replace=False)
        scores = np.clip(np.rint(3 + quality[i] + rng.normal(0, 0.8, chosen.size)), 1, 5).astype(int)
        ratings += [
            Rating(survey=survey, annotator=annotators[a], response=response, score=int(s))
            for a, s in zip(chosen, scores, strict=True)
        ]
        if len(ratings) >= BATCH:
            Rating.objects.bulk_create(ratings)
            ratings = []
    Rating.objects.bulk_create(ratings)
    scores = []
    for m in range(n_metrics):
        values = quality * rng.uniform(0.1, 0.6) + rng.normal(0, 1, n_responses)
        if m % 3 == 0:
            values = np.maximum(values, 0)  # a block of ties at zero, like BLEU
        name = ["bleu2", "rouge_l"][m] if m < 2 else f"metric{m}"
        scores += [
            MetricScore(response=r, metric=name, version="bench", value=float(v))
            for r, v in zip(responses, values, strict=True)
        ]
    MetricScore.objects.bulk_create(scores, batch_size=BATCH)
    return dataset, owner
