"""The pairwise kind: what a pairwise survey does where kinds of task differ (`base.TaskKind`)."""

from django.db.models import Count, Max

from annotation.kinds.base import SubmissionRefused, TaskKind
from annotation.kinds.pairwise import quality
from annotation.kinds.pairwise.answers import PairAnswerError, failed_checks, pairwise_rows
from annotation.kinds.pairwise.exporting import pairwise_export
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.kinds.pairwise.layout import pairwise_layout
from annotation.kinds.pairwise.page import PAIRWISE_QUESTION, pair_questions
from annotation.kinds.pairwise.references import dataset_has_references
from annotation.kinds.pairwise.simulation import simulated_judgements
from annotation.kinds.timing import task_seconds
from annotation.models import Aspect, PairwiseJudgement, Survey, System
from annotation.services.text.answer_seconds import seconds_or_none

PAIRWISE_INSTRUCTIONS = (
    "You will read short conversations, each followed by two possible next turns, reply 1 and reply 2. "
    "Choose the one that is the better reply to the conversation so far, or 'about the same' when neither "
    "is better. Some items are attention checks: read every item."
)
# The survey settings only a pairwise survey reads (the survey form shows them for it alone).
PAIRWISE_SETTINGS = (
    "pair_budget",
    "reference_pairs",
    "allow_tie",
    "ask_strength",
    "ask_reason",
    "max_position_bias",
    "min_position_judgements",
    "min_repeat_consistency",
    "min_repeats",
)


class PairwiseKind(TaskKind):
    name = Survey.TaskType.PAIRWISE
    report_section = "pairwise"
    wording = {
        "heading": "Compare replies to conversations",
        "title": "Compare replies in short conversations",
        "item": ("pair of replies", "pairs of replies"),
        "verb": "compare",
        "page_title": "Join a comparison study",
        "study": "Comparison study",
        "task_title": "Comparison task",
        "answers": "Judgements",
        "answers_lower": "judgements",
    }
    default_question = PAIRWISE_QUESTION
    own_settings = PAIRWISE_SETTINGS
    compares_with_reference = True
    answers_named = "judgements"
    export_name = "pairwise"
    export_label = "pairwise judgements"
    answer_words = ("judgement", "judgements")
    settings_template = "annotation/kinds/pairwise/_settings.html"
    assignment_answers = "pairwise_judgements"
    choice_template = "annotation/kinds/pairwise/_choice.html"
    hint_template = "annotation/kinds/pairwise/_hint.html"
    # A pairwise page's items are pairs (each of reply 1 and reply 2; "pair 5" in its item message).
    page_item = ("pair", "pairs")
    # Its labels (first / tie / second) are nominal: its kappa is never weighted.
    nominal = True
    quality_words = {
        "answers": "Judgements",
        "answers_lower": "judgements",
        "listed": "judgements",
        "per_item": "judged pair",
        "units": "pairs",
        "units_note": "",
        "given": "Choices made",
        "alpha": "nominal",
    }
    quality_split_half = False  # no mean 1-5 scores to correlate
    quality_intro_template = "annotation/kinds/pairwise/_quality_intro.html"
    quality_rules_template = "annotation/kinds/pairwise/_quality_rules.html"
    quality_annotator_template = "annotation/kinds/pairwise/_quality_annotator.html"
    dataset_count = ("n_judgements", "judgements")
    # Its rules judge every question it asks, not the overall one alone.
    quality_aspect = None

    def instructions(self, *, allow_tie=True):
        if allow_tie:
            return PAIRWISE_INSTRUCTIONS
        return PAIRWISE_INSTRUCTIONS.replace(", or 'about the same' when neither is better", "")

    def aspect_question(self, label):
        # A pairwise question is answered 1, 2 or tie: it asks which reply, not for a rating.
        return f"{label[:1].upper()}{label[1:]}: which reply is better?"

    def reference_pairs_problem(self, *, dataset, reference_pairs, systems=()):
        if not dataset_has_references(dataset=dataset):
            return f"Dataset {dataset.name!r} has no references to compare with."
        if reference_pairs == Survey.ReferencePairs.ONLY and not (
            systems or System.objects.filter(dataset=dataset).exists()
        ):
            return "Comparing only with the reference needs at least one system to compare."
        return None

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        # Every pair of systems per context (or the budget): one question per aspect each. The
        # reference is one more side (`also`) or every system's one opponent (`only`).
        reference_pairs = settings["reference_pairs"]
        if reference_pairs == Survey.ReferencePairs.ONLY:
            pairs = n_systems
        else:
            sides = n_systems + (reference_pairs == Survey.ReferencePairs.ALSO)
            pairs = sides * (sides - 1) // 2
        pairs = min(pairs, settings["pair_budget"]) if settings["pair_budget"] else pairs
        # A check is a block of as many pairs as a real one, every question asked of each
        # (kinds/pairwise/layout.py: a gold or repeated pair among filler pairs).
        n_aspects = settings["n_aspects"]
        blocks = min(settings["contexts_per_hit"], n_contexts) + settings["attention_checks_per_hit"]
        items_per_hit = blocks * pairs * n_aspects
        answers = n_contexts * pairs * n_aspects * settings["assignments_per_hit"]
        return items_per_hit, task_seconds(answers=items_per_hit), answers

    def hits_layout(self, *, survey, contexts):
        return pairwise_layout(survey=survey, contexts=contexts)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        return task_seconds(answers=items * n_aspects)

    def scales(self, survey):
        return pair_questions(survey)

    def block_options(self, survey):
        return {"ask_strength": survey.ask_strength, "allow_tie": survey.allow_tie, "ask_reason": survey.ask_reason}

    def describe(self, survey):
        what = "Read short conversations and choose the better of two candidate replies"
        return what + (", or say they are about the same." if survey.allow_tie else ".")

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        try:
            judgements, checks = pairwise_rows(
                assignment=assignment,
                annotator=annotator,
                survey=survey,
                items=items,
                answers=answers,
                aspects=aspects,
                seconds_of=seconds_or_none,
            )
        except PairAnswerError as error:
            raise SubmissionRefused(str(error)) from None
        return judgements, checks, []

    def failed_checks(self, checks, items):
        return failed_checks(checks, items)

    def answer_distribution(self, *, survey, annotator, scale):
        # A pairwise annotator gives choices, not 1-5 scores: count those instead.
        judgements = PairwiseJudgement.objects.filter(survey=survey, annotator=annotator)
        counts = dict(judgements.order_by().values_list("winner").annotate(n=Count("pk")))
        distribution = [(label, counts.get(value, 0)) for value, label in PairwiseJudgement.Winner.choices]
        return distribution, sum(counts.values())

    def answer_model(self):
        return PairwiseJudgement

    def answers_import(self, *, file, dataset, **options):
        return pairwise_import(file=file, dataset=dataset, **options)

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return pairwise_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def quality_rows(self, survey):
        # Its judgements on every question, read as ratings of oriented (pair, question) items on
        # the labels first / tie / second.
        return quality.judgement_rows(survey)

    def quality_scale(self, survey):
        return list(quality.SCALE)

    def quality_aspects(self, survey):
        return list(Aspect.objects.filter(survey=survey).order_by("position").values_list("key", flat=True))

    def pair_counts(self, survey):
        return quality.position_counts(survey), quality.repeat_counts(survey)

    def rule_settings(self, survey):
        return {
            "max_position_bias": survey.max_position_bias,
            "min_position_judgements": survey.min_position_judgements,
            "min_repeat_consistency": survey.min_repeat_consistency,
            "min_repeats": survey.min_repeats,
        }

    def fingerprint_parts(self, survey):
        # Judgements are only ever added to (imported ones come with no attention answers).
        judgements = PairwiseJudgement.objects.filter(survey=survey).aggregate(n=Count("id"), last=Max("id"))
        return ["pairwise", judgements["n"], judgements["last"]]

    def quality_extras(self, survey):
        return {"pairwise": quality.pairwise_quality(survey=survey)}

    def simulated_answers(self, annotator, *, items, aspects, survey):
        return simulated_judgements(annotator, items=items, aspects=aspects, survey=survey)
