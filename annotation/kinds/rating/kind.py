"""The rating kind: what a rating survey does where kinds of task differ (`base.TaskKind`)."""

from annotation.kinds.base import TaskKind
from annotation.kinds.rating.answers import rating_rows, score_distribution
from annotation.kinds.rating.checks import gold_shortfall
from annotation.kinds.rating.exporting import ratings_export
from annotation.kinds.rating.layout import context_layout
from annotation.kinds.rating.page import rating_scales
from annotation.kinds.timing import task_seconds
from annotation.models import Rating, Survey
from annotation.quality import data
from annotation.services.imports import ratings_import


class RatingKind(TaskKind):
    rates_on_a_scale = True  # the survey's own scale (1-5 unless its aspect says otherwise)
    name = Survey.TaskType.RATE
    wording = {
        "heading": "Rate replies to conversations",
        "title": "Rate replies in short conversations",
        "item": ("reply", "replies"),
        "verb": "rate",
        "page_title": "Join a rating study",
        "study": "Rating study",
        "task_title": "Rating task",
        "answers": "Ratings",
        "answers_lower": "ratings",
    }
    own_fields = ("aspect_details",)
    describes_aspects = True
    rates_responses = True
    choice_template = "annotation/kinds/rating/_scale.html"
    hint_template = "annotation/kinds/rating/_hint.html"

    def instructions(self, *, allow_tie=True):
        return Survey._meta.get_field("instructions").default

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        # A check, gold or instructed, is a block of as many replies as a real one, every question
        # asked of each (kinds/rating/checks.py).
        n_aspects, per_hit = settings["n_aspects"], settings["assignments_per_hit"]
        items_per_hit = (contexts_in_first_hit + settings["attention_checks_per_hit"]) * n_systems * n_aspects
        # Overlap contexts: rated once by every annotator, and there are at least assignments_per_hit.
        answers = (regular + overlap) * n_systems * n_aspects * per_hit
        return items_per_hit, task_seconds(answers=items_per_hit), answers

    def gold_shortfall(self, **counts):
        return gold_shortfall(**counts)

    def hits_layout(self, *, survey, contexts):
        return context_layout(survey=survey, contexts=contexts)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        return task_seconds(answers=items * n_aspects)

    def scales(self, survey):
        return rating_scales(survey)

    def describe(self, survey):
        return f"Read short conversations and judge how appropriate each candidate reply is{_scale(survey)}."

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        return rating_rows(
            assignment=assignment, annotator=annotator, survey=survey, items=items, answers=answers, aspects=aspects
        )

    def answer_distribution(self, *, survey, annotator, scale):
        return score_distribution(survey=survey, annotator=annotator, scale=scale)

    def answer_model(self):
        return Rating

    def answers_import(self, *, file, dataset, **options):
        return ratings_import(file=file, dataset=dataset, **options)

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return ratings_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def quality_rows(self, survey):
        return data.rating_rows(surveys=[survey])

    def quality_scale(self, survey):
        return data.survey_scale(survey)

    def simulated_answers(self, annotator, *, items, aspects, survey):
        answers = {}
        for item in items:
            seconds = annotator.seconds()
            scales = aspects[:1] if item.asks_main_only else aspects
            answers[item.pk] = {"scores": {a.key: annotator.score(item, a) for a in scales}, "seconds": seconds}
        return answers


def _scale(survey):
    """ ", on a 1-5 scale" when every question of the survey has that scale (unsaved surveys: 1-5)."""
    if survey.pk is None:
        return ", on a 1-5 scale"
    scales = set(survey.aspects.values_list("scale_min", "scale_max"))
    if len(scales) != 1:
        return ""
    low, high = scales.pop()
    return f", on a {low}-{high} scale"
