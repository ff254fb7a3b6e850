"""The best-worst scaling kind: what a BWS survey does where kinds of task differ (`base.TaskKind`).

An item is a tuple of replies to one context (`layout`: balanced tuples of `survey.tuple_size`);
the annotator picks the best and the worst (`page`, `answers`); a gold tuple hides a broken reply
that must be picked worst. The report's `bws` section scores systems by counting and by a
Bradley-Terry fit on the pairs each judgement implies (analysis/sections/bws.py).
"""

from django.db.models import Count, Max, Q

from annotation.kinds.base import SubmissionRefused, TaskKind
from annotation.kinds.bws import quality
from annotation.kinds.bws.across_page import BLOCK_TEMPLATE as ACROSS_BLOCK_TEMPLATE
from annotation.kinds.bws.across_page import CHOICE_TEMPLATE, across_blocks
from annotation.kinds.bws.across_tuples import across_tuple_count
from annotation.kinds.bws.answers import KEYS, TupleAnswerError, bws_rows
from annotation.kinds.bws.exporting import bws_export
from annotation.kinds.bws.layout import bws_layout
from annotation.kinds.bws.page import BEST_QUESTION, tuple_questions
from annotation.kinds.bws.tuples import tuple_count
from annotation.kinds.timing import task_seconds
from annotation.models import AttentionAnswer, BWSJudgement, HITItem, Survey
from annotation.services.text.answer_seconds import seconds_or_none

BWS_INSTRUCTIONS = (
    "You will read short conversations, each followed by a few possible next turns. For each set of "
    "replies, pick the best reply and the worst reply (two different replies). Some items are attention "
    "checks: read every reply."
)


class BWSKind(TaskKind):
    name = Survey.TaskType.BWS
    report_section = "bws"
    wording = {
        "heading": "Pick the best and worst replies",
        "title": "Pick the best and worst replies in short conversations",
        "item": ("set of replies", "sets of replies"),
        "verb": "judge",
        "page_title": "Join a best-worst study",
        "study": "Best-worst study",
        "task_title": "Best-worst task",
        "answers": "Judgements",
        "answers_lower": "judgements",
    }
    description = "Read short conversations and pick the best and the worst of a few candidate replies."
    default_question = BEST_QUESTION
    own_settings = ("tuple_size", "bws_across_contexts")
    answers_named = "judgements"
    dataset_count = ("n_bws_judgements", "judgements")
    export_name = "bws"
    choice_template = CHOICE_TEMPLATE
    hint_template = "annotation/kinds/bws/_hint.html"
    page_item = ("set", "sets")
    block_templates = (ACROSS_BLOCK_TEMPLATE,)

    def instructions(self, *, allow_tie=True):
        return BWS_INSTRUCTIONS

    def survey_problem(self, survey):
        if survey.tuple_size < 3:
            return "A best-worst tuple shows at least 3 replies (with 2, use a pairwise survey)."
        return None

    def form_problem(self, data):
        # A set is asked for its best and worst overall: extra questions would not be shown.
        if data.get("aspect_keys"):
            message = "A best-worst survey asks for the best and worst reply overall: it takes no extra aspects."
            return "aspects", message
        return None

    def aspect_question(self, label):
        return f"{label[:1].upper()}{label[1:]}: which reply is best, which worst?"

    def reference_pairs_problem(self, *, dataset, reference_pairs, systems=()):
        return "Comparing with the reference is for pairwise (A/B) surveys only."

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        size = settings.get("tuple_size") or 4
        if settings.get("bws_across_contexts"):
            # sets of replies to different contexts, each reply shown about twice, plus the gold
            # sets (across_layout.py)
            replies = min(settings["contexts_per_hit"], n_contexts) * n_systems
            items_per_hit = across_tuple_count(replies, size) + settings["attention_checks_per_hit"]
            answers = across_tuple_count(n_contexts * n_systems, size) * settings["assignments_per_hit"]
            return items_per_hit, self.estimated_seconds(items=items_per_hit, n_aspects=1), answers
        tuples = tuple_count(n_systems, size) if n_systems >= 3 else 0
        # a check block is a borrowed context's tuples, one of them the gold one (layout.py)
        blocks = min(settings["contexts_per_hit"], n_contexts) + settings["attention_checks_per_hit"]
        items_per_hit = blocks * tuples
        answers = n_contexts * tuples * settings["assignments_per_hit"]
        return items_per_hit, self.estimated_seconds(items=items_per_hit, n_aspects=1), answers

    def page_blocks(self, *, survey, items, scales, previous, missing):
        if not survey.bws_across_contexts:
            return None  # the shared layout: a context's sets under its conversation
        return across_blocks(survey=survey, items=items, scales=scales, previous=previous, missing=missing)

    def hits_layout(self, *, survey, contexts):
        return bws_layout(survey=survey, contexts=contexts)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        # a tuple is read once and answered twice: about two choices' time
        return task_seconds(answers=items * 2)

    def scales(self, survey):
        return tuple_questions(survey)

    def answer_keys(self, item, aspects):
        return set(KEYS)

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        try:
            judgements, checks = bws_rows(
                assignment=assignment,
                annotator=annotator,
                survey=survey,
                items=items,
                answers=answers,
                seconds_of=seconds_or_none,
            )
        except TupleAnswerError as error:
            raise SubmissionRefused(str(error)) from None
        return judgements, checks, []

    def answer_model(self):
        return BWSJudgement

    def answer_distribution(self, *, survey, annotator, scale):
        # Where in the shown tuple the annotator's best picks fell: a flat spread is expected.
        counts = {}
        for responses, best in BWSJudgement.objects.filter(survey=survey, annotator=annotator).values_list(
            "responses", "best_id"
        ):
            place = responses.index(best) + 1
            counts[place] = counts.get(place, 0) + 1
        distribution = [(f"Best shown {n}", counts.get(n, 0)) for n in range(1, survey.tuple_size + 1)]
        return distribution, sum(counts.values())

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return bws_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def quality_rows(self, survey):
        return quality.judgement_rows(survey)

    def quality_scale(self, survey):
        return list(quality.SCALE)

    def fingerprint_parts(self, survey):
        judgements = BWSJudgement.objects.filter(survey=survey).aggregate(n=Count("id"), last=Max("id"))
        return ["bws", judgements["n"], judgements["last"]]

    def quality_extras(self, survey):
        answers = AttentionAnswer.objects.filter(assignment__hit__survey=survey, item__kind=HITItem.Kind.BWS_GOLD)
        checks = answers.aggregate(n=Count("id"), failed=Count("id", filter=Q(passed=False)))
        return {"bws": {"gold_tuples": checks["n"], "gold_failed": checks["failed"]}}

    def simulated_answers(self, annotator, *, items, aspects, survey):
        return quality.simulated_picks(annotator, items=items, aspects=aspects, survey=survey)
