"""Builders for the best-worst tests: a BWS survey and answers that pass its checks."""

from annotation import services
from annotation.models import HITItem
from tests.annotation.studies_helpers import make_survey

SIX_SYSTEMS = ("hred", "tfidf", "human", "de", "seq2seq", "retrieval")


def make_bws_survey(owner, **settings):
    settings.setdefault("task_type", "bws")
    settings.setdefault("dataset_systems", SIX_SYSTEMS)
    return make_survey(owner, **settings)


def bws_answers(assignment, pick=lambda item: (1, 2), seconds=5.0):
    """Answers to every tuple: `pick(item)` = (best, worst) numbers on real and filler tuples; on gold tuples
    the broken reply worst and the first real one best (so every check passes)."""
    answers = {}
    for item in services.assignment_items(assignment=assignment):
        if item.kind == HITItem.Kind.BWS_GOLD:
            worst = item.tuple_responses.index(None) + 1
            best = next(n for n, pk in enumerate(item.tuple_responses, start=1) if pk is not None)
        else:
            best, worst = pick(item)
        answers[item.pk] = {"scores": {"best": str(best), "worst": str(worst)}, "seconds": seconds}
    return answers


def form_data(answers):
    data = {}
    for item_id, answer in answers.items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = str(answer["seconds"])
    return data
