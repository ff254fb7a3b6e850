"""Simulated annotators that go through the real claim and submit path (demo, tests, benchmarks).

The annotators' noise model is in annotation/kinds/simulated.py and what each kind of task answers in
its package (`simulated_answers`); here they claim and submit work as a crowd would, in turns.
"""

import random

from annotation.kinds.registry import kind_for
from annotation.kinds.simulated import CARELESS, PASTER, STRAIGHT_LINER, SimulatedAnnotator
from annotation.models import Aspect, Survey
from annotation.services import NoWorkAvailable, assignment_claim, assignment_items, assignment_submit


def _answers(annotator, assignment, aspects):
    """The annotator's answers to the items the assignment shows, as the survey's kind gives them."""
    survey = assignment.hit.survey
    items = assignment_items(assignment=assignment)
    return kind_for(survey).simulated_answers(annotator, items=items, aspects=aspects, survey=survey)


def demo_layout_seed(seed, survey_name):
    """The layout seed of a survey the demo simulates: the same HITs, so the same simulated ratings
    and figures, in every build (a survey's own seed is random: annotation/kinds/base.py)."""
    return f"demo:{seed}:{survey_name}"


def _roles(rng, n_annotators, careless_ids, straight_liners, pasters):
    """Each annotator's role: the careless as drawn, then straight-liners and pasters among the others."""
    others = [i for i in range(n_annotators) if i not in careless_ids]
    if straight_liners + pasters > len(others):
        raise ValueError("more straight-liners and pasters than annotators who are not careless")
    chosen = rng.sample(others, straight_liners + pasters) if straight_liners + pasters else []
    roles = dict.fromkeys(careless_ids, CARELESS)
    roles.update(dict.fromkeys(chosen[:straight_liners], STRAIGHT_LINER))
    roles.update(dict.fromkeys(chosen[straight_liners:], PASTER))
    return roles


def ratings_simulate(
    *, survey, n_annotators, seed=0, careless_fraction=0.0, max_hits=None, prefix="sim", straight_liners=0, pasters=0
):
    """Let `n_annotators` simulated annotators work the live survey until no work is left for them.

    They take turns, one HIT each per round, so the work spreads as it would with a real crowd.
    `straight_liners` and `pasters`: how many of the careful ones give the same answer throughout,
    or paste their written replies (kinds/simulated.py), for the integrity flags to find.
    Returns a summary: annotators, careless, assignments, ratings (a pairwise survey's: judgements;
    a write survey's: written), checks failed (and straight-liners, pasters when there are any).
    """
    survey = Survey.objects.get(pk=survey.pk)
    rng = random.Random(seed)
    aspects = sorted(survey.aspects.all(), key=lambda a: a.key != Aspect.OVERALL)
    n_careless = round(n_annotators * careless_fraction)
    careless_ids = set(rng.sample(range(n_annotators), n_careless))
    roles = _roles(random.Random(f"{seed}:roles"), n_annotators, careless_ids, straight_liners, pasters)
    crowd = [
        SimulatedAnnotator(f"{prefix}-{seed}-{i:03d}", i in careless_ids, random.Random(f"{seed}:{i}"), roles.get(i))
        for i in range(n_annotators)
    ]
    # The summary names the answers as the survey's type does: judgements, written replies or ratings.
    answers = kind_for(survey).answers_named
    summary = {"annotators": n_annotators, "careless": n_careless, "assignments": 0, answers: 0, "checks_failed": 0}
    summary.update({key: n for key, n in (("straight_liners", straight_liners), ("pasters", pasters)) if n})
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
            result = assignment_submit(assignment=assignment, answers=_answers(annotator, assignment, aspects))
            done[index] += 1
            summary["assignments"] += 1
            summary[answers] += result.written if answers == "written" else result.ratings
            summary["checks_failed"] += result.checks_failed
            still.append(index)
        active = still
    return summary
