"""The writing kind: what a writing survey does where kinds of task differ (`base.TaskKind`).

Its contexts are laid out as a rating survey's are, one item per context and no checks (a written
reply has no right answer to check), and its replies are exported and judged as ratings are."""

from django.db.models import Count, Max

from annotation.kinds.base import TaskKind
from annotation.kinds.rating.answers import score_distribution
from annotation.kinds.rating.exporting import ratings_export
from annotation.kinds.rating.layout import context_layout
from annotation.kinds.rating.page import rating_scales
from annotation.kinds.timing import task_seconds
from annotation.kinds.writing.answers import written_rows
from annotation.kinds.writing.reference_llm import reference_llm_problem, reference_samples
from annotation.kinds.writing.simulation import simulated_replies
from annotation.models import Rating, Survey, WrittenResponse
from annotation.quality import data
from annotation.services.text.reserved import reserved_system_name_problem

WRITE_INSTRUCTIONS = (
    "You will read short conversations. For each one, write the next turn: a reply that fits the "
    "conversation so far, in your own words, as a person taking part in it would."
)


class WritingKind(TaskKind):
    name = Survey.TaskType.WRITE
    wording = {
        "heading": "Write replies to conversations",
        "title": "Write replies in short conversations",
        "item": ("reply", "replies"),
        "verb": "write",
        "page_title": "Join a writing study",
        "study": "Writing study",
        "task_title": "Writing task",
        "answers": "Written replies",
        "answers_lower": "written replies",
    }
    description = "Read short conversations and write a fitting next reply to each."
    recorded = (
        "While you write, this page records how each reply is entered (time to the first key, typing "
        "time, counts of keys, deletions, pastes and pasted characters, and how often you leave the "
        "page), not the keys themselves; nothing is recorded before your task begins."
    )
    default_question = ""
    own_settings = ("write_system_name", "reference_llm_systems")
    answers_named = "written"
    dataset_count = ("n_written", "written replies")
    answer_words = ("written reply", "written replies")
    writes_responses = True
    # Its answers are written replies, which reach the survey through their assignment.
    answer_survey = "assignment__hit__survey"
    answer_annotator = "assignment__annotator"
    assignment_answers = "written_responses"
    # Write items take no choice; the template is only what the page's shared code is given.
    choice_template = "annotation/kinds/rating/_scale.html"
    page_extra_scripts = ("annotation/kinds/writing/telemetry.js",)

    def instructions(self, *, allow_tie=True):
        return WRITE_INSTRUCTIONS

    def reference_llm_samples(self, survey, context_ids):
        return reference_samples(survey, context_ids)

    def survey_problem(self, survey):
        if not survey.write_system_name:
            return "A write task needs the name of the system that accepted responses join."
        problem = reserved_system_name_problem(survey.write_system_name)
        if problem:
            return problem + "."
        return reference_llm_problem(survey)

    def form_problem(self, data):
        if not data.get("write_system_name"):
            return "write_system_name", "A write task needs the system name accepted replies join."
        return None

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        items_per_hit = contexts_in_first_hit
        answers = n_contexts * settings["assignments_per_hit"]  # one reply per context and annotator
        return items_per_hit, task_seconds(written=items_per_hit), answers

    def hits_layout(self, *, survey, contexts):
        return context_layout(survey=survey, contexts=contexts, write=True)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        return task_seconds(written=items)

    def scales(self, survey):
        return rating_scales(survey)

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        return written_rows(assignment=assignment, items=items, answers=answers)

    def answer_distribution(self, *, survey, annotator, scale):
        return score_distribution(survey=survey, annotator=annotator, scale=scale)

    def answer_model(self):
        # A writing submission's answers are its written replies (the third list of `validated_rows`):
        # its first list, the one stored here, is always empty.
        return Rating

    def counted_answers(self):
        return WrittenResponse

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return ratings_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def fingerprint_parts(self, survey):
        # Written replies feed the integrity section (flags); they are only ever added to.
        written = WrittenResponse.objects.filter(assignment__hit__survey=survey)
        written = written.aggregate(n=Count("id"), last=Max("id"))
        return ["written", written["n"], written["last"]]

    def quality_rows(self, survey):
        return data.rating_rows(surveys=[survey])

    def quality_scale(self, survey):
        return data.survey_scale(survey)

    def simulated_answers(self, annotator, *, items, aspects, survey):
        return simulated_replies(annotator, items=items)
