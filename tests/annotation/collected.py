"""A small survey "collected in the app", built with the ORM: HITs, assignments, ratings, checks.

Six annotators rate the same 24 responses on two HITs, each HIT with one instructed attention
check. Three are careful (close to a fixed "truth"), `careless` answers at random, `hasty` is
careful but takes half a second per item, and `inattentive` is careful but fails a check.
"""

import numpy as np
from django.utils import timezone

from annotation.models import HIT, Annotator, Aspect, Assignment, HITItem, Rating, Survey
from annotation.models.ratings import AttentionAnswer
from tests.factories import load_dataset_records

CAREFUL = ("ann", "ben", "cat")
WORKERS = (*CAREFUL, "careless", "hasty", "inattentive")
N_CONTEXTS = 12
SYSTEMS = ("hred", "tfidf")


def truth(index):
    return 1 + (index * 3) % 5


def _score(worker, index, rng):
    if worker == "careless":
        return int(rng.integers(1, 6))
    offset = WORKERS.index(worker)
    # Careful annotators agree with the truth except on one item in five, each on different items.
    if (index + offset) % 5 == 0:
        return min(5, truth(index) + 1) if truth(index) < 5 else 4
    return truth(index)


def build_collected_survey(*, owner, name="collected", attention_policy="exclude", seed=0):
    records = [
        {
            "context_id": f"c{i:02d}",
            "context": [f"hello number {i}", "how are you?"],
            "references": [f"fine {i}"],
            "responses": [{"system": s, "text": f"{s} says {i}"} for s in SYSTEMS],
        }
        for i in range(N_CONTEXTS)
    ]
    dataset = load_dataset_records(records=records, name=f"{name}-data", owner=owner)
    survey = Survey.objects.create(
        dataset=dataset,
        name=name,
        owner=owner,
        status=Survey.Status.LIVE,
        contexts_per_hit=6,
        assignments_per_hit=len(WORKERS),
        attention_checks_per_hit=1,
        attention_policy=attention_policy,
        min_pair_overlap=5,
        min_seconds_per_item=1.5,
    )
    Aspect.objects.create(survey=survey, key=Aspect.OVERALL)
    responses = list(
        survey.dataset.contexts.order_by("position")
        .values_list("responses__pk", flat=True)
        .order_by("position", "responses__system__name")
    )
    annotators = {w: Annotator.objects.get_or_create(provider="local", worker_id=w)[0] for w in WORKERS}
    rng = np.random.default_rng(seed)
    now = timezone.now()
    per_hit = len(responses) // 2
    for h in range(2):
        hit = HIT.objects.create(survey=survey, position=h)
        items = [
            HITItem.objects.create(hit=hit, position=p, kind=HITItem.Kind.RESPONSE, response_id=response_id)
            for p, response_id in enumerate(responses[h * per_hit : (h + 1) * per_hit])
        ]
        check = HITItem.objects.create(hit=hit, position=per_hit, kind=HITItem.Kind.INSTRUCTED, instructed_score=2)
        for slot, worker in enumerate(WORKERS):
            assignment = Assignment.objects.create(
                hit=hit,
                slot=slot,
                annotator=annotators[worker],
                status=Assignment.Status.SUBMITTED,
                assigned_at=now,
                submitted_at=now,
            )
            seconds = 0.5 if worker == "hasty" else 4.0 + slot
            Rating.objects.bulk_create(
                Rating(
                    survey=survey,
                    annotator=annotators[worker],
                    response_id=item.response_id,
                    score=_score(worker, h * per_hit + item.position, rng),
                    seconds=seconds,
                    assignment=assignment,
                )
                for item in items
            )
            failed = worker == "inattentive" and h == 1
            AttentionAnswer.objects.create(
                assignment=assignment, item=check, score=4 if failed else 2, passed=not failed, seconds=seconds
            )
    return survey
