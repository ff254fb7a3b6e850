"""Simulated annotators that go through the real claim and submit path (demo, tests, benchmarks).

Noise model. A diligent annotator scores a response round(1 + 4*q + noise), clipped to the scale,
where q in [0, 1] is the response's latent quality: `meta["demo_quality"]` when the demo data sets
it, otherwise a stable hash of the response's text (so repeated runs agree), and noise ~ N(0, 0.6)
plus a per-annotator bias ~ N(0, 0.3). Diligent annotators pass attention checks and take 3-12 s
per item. In a pairwise survey they choose as `SimulatedAnnotator.choose` says; a context's
reference shown as a side (the reference pseudo-system's response, `meta["reference_id"]`) has
quality REFERENCE_QUALITY: a human-written reply, better than most systems'.
A careless annotator answers uniformly at random in under 1.5 s per item, so it fails
most instructed checks and shows up in agreement and timing statistics.
"""

import hashlib
import random

from annotation.models import Aspect, HITItem, Survey
from annotation.services import NoWorkAvailable, assignment_claim, assignment_items, assignment_submit

NOISE_SD = 0.6
BIAS_SD = 0.3
# Pairwise: the better reply wins unless noise ~ N(0, 0.15) on the quality gap reverses it, and a
# gap under 0.05 reads as a tie (where ties are allowed).
PAIR_NOISE_SD = 0.15
TIE_MARGIN = 0.05
REFERENCE_QUALITY = 0.8


def latent_quality(response):
    meta = response.meta or {}
    if "reference_id" in meta and "demo_quality" not in meta:
        return REFERENCE_QUALITY
    quality = meta.get("demo_quality")
    if isinstance(quality, (int, float)):
        return min(max(float(quality), 0.0), 1.0)
    digest = hashlib.sha256(response.text.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


class SimulatedAnnotator:
    def __init__(self, worker_id, careless, rng):
        self.worker_id = worker_id
        self.careless = careless
        self.rng = rng
        self.bias = rng.gauss(0, BIAS_SD)

    def score(self, item, aspect):
        low, high = aspect.scale_min, aspect.scale_max
        if self.careless:
            return self.rng.randint(low, high)
        if item.kind == HITItem.Kind.INSTRUCTED:
            return item.instructed_score
        if item.kind == HITItem.Kind.GOLD:
            return item.attention_check.accepted_scores[0]
        value = low + (high - low) * latent_quality(item.response) + self.bias + self.rng.gauss(0, NOISE_SD)
        return min(max(round(value), low), high)

    def choose(self, item, survey):
        """A pairwise choice: the reply of higher latent quality (plus noise) wins; close calls tie."""
        options = ["a", "b", "tie"] if survey.allow_tie else ["a", "b"]
        if self.careless:
            return self.rng.choice(options)
        if item.kind == HITItem.Kind.PAIR_GOLD:
            return "a" if item.response_id else "b"
        gap = latent_quality(item.response) - latent_quality(item.response_b) + self.rng.gauss(0, PAIR_NOISE_SD)
        if survey.allow_tie and abs(gap) < TIE_MARGIN:
            return "tie"
        return "a" if gap > 0 else "b"

    def pair_answers(self, assignment, aspects, survey):
        answers = {}
        for item in assignment_items(assignment=assignment):
            seconds = self.rng.uniform(0.3, 1.5) if self.careless else self.rng.uniform(4, 15)
            answers[item.pk] = {"scores": {a.key: self.choose(item, survey) for a in aspects}, "seconds": seconds}
        return answers

    def answers(self, assignment, aspects):
        survey = assignment.hit.survey
        if survey.task_type == Survey.TaskType.PAIRWISE:
            return self.pair_answers(assignment, aspects, survey)
        answers = {}
        for item in assignment_items(assignment=assignment):
            seconds = self.rng.uniform(0.3, 1.5) if self.careless else self.rng.uniform(3, 12)
            if item.kind == HITItem.Kind.WRITE:
                answers[item.pk] = {"scores": {}, "seconds": seconds, "text": f"Simulated reply by {self.worker_id}."}
                continue
            scales = aspects[:1] if item.asks_main_only else aspects
            answers[item.pk] = {"scores": {a.key: self.score(item, a) for a in scales}, "seconds": seconds}
        return answers


def ratings_simulate(*, survey, n_annotators, seed=0, careless_fraction=0.0, max_hits=None, prefix="sim"):
    """Let `n_annotators` simulated annotators work the live survey until no work is left for them.

    They take turns, one HIT each per round, so the work spreads as it would with a real crowd.
    Returns a summary: annotators, careless, assignments, ratings (a pairwise survey's: judgements;
    a write survey's: written), checks failed.
    """
    survey = Survey.objects.get(pk=survey.pk)
    rng = random.Random(seed)
    aspects = sorted(survey.aspects.all(), key=lambda a: a.key != Aspect.OVERALL)
    n_careless = round(n_annotators * careless_fraction)
    careless_ids = set(rng.sample(range(n_annotators), n_careless))
    crowd = [
        SimulatedAnnotator(f"{prefix}-{seed}-{i:03d}", i in careless_ids, random.Random(f"{seed}:{i}"))
        for i in range(n_annotators)
    ]
    # The summary names the answers as the survey's type does: judgements, written replies or ratings.
    named = {Survey.TaskType.PAIRWISE: "judgements", Survey.TaskType.WRITE: "written"}
    answers = named.get(survey.task_type, "ratings")
    summary = {"annotators": n_annotators, "careless": n_careless, "assignments": 0, answers: 0, "checks_failed": 0}
    done = dict.fromkeys(range(n_annotators), 0)
    active = list(range(n_annotators))
    while active:
        still = []
        for index in active:
            annotator = crowd[index]
            if max_hits is not None and done[index] >= max_hits:
                continue
            try:
                assignment = assignment_claim(survey=survey, worker_id=annotator.worker_id, provider=survey.provider)
            except NoWorkAvailable:
                continue
            result = assignment_submit(assignment=assignment, answers=annotator.answers(assignment, aspects))
            done[index] += 1
            summary["assignments"] += 1
            summary[answers] += result.written if answers == "written" else result.ratings
            summary["checks_failed"] += result.checks_failed
            still.append(index)
        active = still
    return summary
