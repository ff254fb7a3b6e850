"""Builders for the pairwise tests: a pairwise survey and answers that pass its checks."""

from annotation import services
from annotation.models import HITItem
from tests.annotation.studies_helpers import make_survey


def make_pairwise_survey(owner, **settings):
    settings.setdefault("task_type", "pairwise")
    settings.setdefault("attention_checks_per_hit", 2)
    return make_survey(owner, **settings)


def pairwise_answers(assignment, choose=lambda item: "a", seconds=3.0):
    """Answers to every item: `choose(item)` on real pairs and on filler pairs, the real reply on
    gold pairs, the mirror of the first answer on repeats (so every check passes)."""
    items = services.assignment_items(assignment=assignment)
    aspects = list(assignment.hit.survey.aspects.values_list("key", flat=True))
    chosen = {item.pk: choose(item) for item in items if item.kind in (HITItem.Kind.PAIR, HITItem.Kind.PAIR_FILLER)}
    mirror = {"a": "b", "b": "a", "tie": "tie"}
    answers = {}
    for item in items:
        if item.kind in (HITItem.Kind.PAIR, HITItem.Kind.PAIR_FILLER):
            scores = dict.fromkeys(aspects, chosen[item.pk])
        elif item.kind == HITItem.Kind.PAIR_GOLD:
            scores = dict.fromkeys(aspects, "a" if item.response_id else "b")
        else:
            scores = dict.fromkeys(aspects, mirror[chosen[item.repeat_of_id]])
        answers[item.pk] = {"scores": scores, "seconds": seconds}
    return answers
