"""The ACUTE-Eval kind: an annotator reads two whole conversations of different systems and says,
for each of ACUTE's questions (or the researcher's), which bot they prefer (`base.TaskKind`)."""

from django.db.models import Count

from annotation.kinds.acute import page
from annotation.kinds.acute.answers import QUESTION_CHARS, acute_rows, failed_acute_checks
from annotation.kinds.acute.exporting import acute_export
from annotation.kinds.acute.layout import acute_layout
from annotation.kinds.base import TaskKind
from annotation.kinds.conversation.kind import TYPICAL_TURNS
from annotation.kinds.conversation.layout import survey_conversations
from annotation.kinds.conversation.simulation import conversation_quality
from annotation.kinds.timing import task_seconds
from annotation.models import Conversation, ConversationJudgement, ConversationTurn, HITItem, Survey

# ACUTE-Eval's questions (Li et al., 2019), the first asked as the main one (the check pairs' question).
ACUTE_QUESTIONS = (
    ("overall", "Who would you prefer to talk to for a long conversation?"),
    ("human", "Which speaker sounds more human?"),
    ("interesting", "Who is more interesting to talk to?"),
    ("knowledgeable", "Which speaker is more knowledgeable?"),
)
ACUTE_INSTRUCTIONS = (
    "You will read pairs of conversations, each between a chatbot (Bot) and a partner. For each pair, "
    "answer every question about the two bots by choosing conversation 1 or conversation 2, even when "
    "the choice is close. A one-line reason is welcome but optional. Some pairs are attention checks: "
    "read both conversations."
)


class AcuteKind(TaskKind):
    name = Survey.TaskType.ACUTE
    report_section = "conversations"
    wording = {
        "heading": "Compare two conversations with chatbots",
        "title": "Read two conversations with chatbots and say which bot you prefer",
        "item": ("pair of conversations", "pairs of conversations"),
        "verb": "compare",
        "page_title": "Join a conversation comparison study",
        "study": "Conversation comparison study",
        "task_title": "Conversation comparison task",
        "answers": "Conversation judgements",
        "answers_lower": "conversation judgements",
    }
    description = "Read two conversations with chatbots side by side and say which bot you prefer."
    default_question = ACUTE_QUESTIONS[0][1]
    answers_named = "judgements"
    dataset_count = ("n_conversation_judgements", "judgements")
    export_name = "conversation_judgements"
    choice_template = "annotation/kinds/pairwise/_choice.html"
    block_templates = (page.BLOCK_TEMPLATE,)
    page_modules = (page,)
    page_item = ("comparison", "comparisons")
    nominal = True

    def instructions(self, *, allow_tie=True):
        return ACUTE_INSTRUCTIONS

    def default_aspects(self, dataset):
        return [{"key": key, "question": question, "scale_labels": {}} for key, question in ACUTE_QUESTIONS]

    def aspect_question(self, label):
        return f"Which bot is better on {label}?"

    def survey_problem(self, survey):
        systems = Conversation.objects.filter(dataset_id=survey.dataset_id).values("system_id").distinct()
        if systems.count() < 2:
            return f"Dataset {survey.dataset.name!r} needs conversations of at least two systems to compare."
        return None

    def planned_units(self, dataset):
        # About one pair per two conversations (a seed's two systems; unseeded ones paired off).
        return dataset.conversations.count() // 2

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        per_hit = contexts_in_first_hit + settings["attention_checks_per_hit"]
        turns = 2 * (settings.get("turns_per_conversation") or TYPICAL_TURNS)
        seconds = task_seconds(answers=per_hit * settings["n_aspects"], turns_read=per_hit * turns)
        return per_hit, seconds, n_contexts * settings["n_aspects"] * settings["assignments_per_hit"]

    def hits_layout(self, *, survey, contexts):
        return acute_layout(survey=survey)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        """Both conversations read, then one choice per question."""
        turns = TYPICAL_TURNS
        if survey is not None:
            conversations = survey_conversations(survey)
            n = ConversationTurn.objects.filter(conversation_id__in=conversations).count()
            turns = n / max(len(conversations), 1)
        return task_seconds(answers=items * n_aspects, turns_read=round(items * 2 * turns))

    def scales(self, survey):
        return page.acute_questions(survey)

    def page_blocks(self, *, survey, items, scales, previous, missing):
        return page.acute_blocks(items=items, scales=scales, previous=previous, missing=missing)

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        return acute_rows(
            assignment=assignment, annotator=annotator, survey=survey, items=items, answers=answers, aspects=aspects
        )

    def answer_model(self):
        return ConversationJudgement

    def failed_checks(self, checks, items):
        return failed_acute_checks(checks, items)

    def answer_distribution(self, *, survey, annotator, scale):
        judgements = ConversationJudgement.objects.filter(survey=survey, annotator=annotator)
        counts = dict(judgements.order_by().values_list("winner").annotate(n=Count("pk")))
        return [("Left", counts.get("a", 0)), ("Right", counts.get("b", 0))], sum(counts.values())

    def export(self, *, dataset, survey, stream, fmt, real_ids=False):
        return acute_export(dataset=dataset, survey=survey, stream=stream, fmt=fmt, real_ids=real_ids)

    def quality_rows(self, survey):
        """The main question's choices as rating rows (1 left, 2 right), a pair as shown being the item."""
        main = survey.aspects.get(key="overall").question[:QUESTION_CHARS]
        rows = ConversationJudgement.objects.filter(survey=survey, question=main).order_by("id")
        fields = ("annotator_id", "conversation_a_id", "conversation_b_id", "winner", "seconds")
        return [
            {"survey_id": survey.pk, "annotator_id": a, "response_id": f"{left}:{right}", "score": 1 + (w == "b")}
            | {"seconds": seconds}
            for a, left, right, w, seconds in rows.values_list(*fields)
        ]

    def quality_scale(self, survey):
        return [1, 2]

    def fingerprint_parts(self, survey):
        counts = ConversationJudgement.objects.filter(survey=survey).aggregate(n=Count("id"))
        return ["acute", counts["n"]]

    def simulated_answers(self, annotator, *, items, aspects, survey):
        """A diligent annotator prefers the conversation of higher latent quality (with noise) and the
        real side of a check pair; a careless one chooses at random."""
        rng = annotator.rng
        ids = {pk for item in items for pk in (item.conversation_id, item.conversation_b_id) if pk}
        conversations = {c.pk: c for c in Conversation.objects.filter(pk__in=ids)}
        answers = {}
        for item in items:
            if annotator.careless:
                choice = lambda: rng.choice("ab")  # noqa: E731
            elif item.kind == HITItem.Kind.CONV_PAIR_GOLD:
                real = "a" if item.instructed_score == 0 else "b"
                choice = lambda real=real: real  # noqa: E731
            elif item.kind == HITItem.Kind.CONV_PAIR_REPEAT and item.repeat_of_id in answers:
                # mirrors the first answer, but a close pair may go the other way this time
                first = answers[item.repeat_of_id]["scores"]
                left = conversation_quality(conversations[item.conversation_id], [])
                right = conversation_quality(conversations[item.conversation_b_id], [])
                flip = abs(left - right) < 0.1 and rng.random() < 0.3

                def choice(first=first, flip=flip, key=None):
                    return first[key] if flip else {"a": "b", "b": "a"}[first[key]]
            else:
                left = conversation_quality(conversations[item.conversation_id], [])
                right = conversation_quality(conversations[item.conversation_b_id], [])
                choice = lambda left=left, right=right: "a" if left + rng.gauss(0, 0.15) >= right else "b"  # noqa: E731
            if item.kind == HITItem.Kind.CONV_PAIR_REPEAT and item.repeat_of_id in answers and not annotator.careless:
                scores = {aspect.key: choice(key=aspect.key) for aspect in aspects}
            else:
                scores = {aspect.key: choice() for aspect in aspects}
            seconds = rng.uniform(3, 10) if annotator.careless else rng.uniform(60, 180)
            answers[item.pk] = {"scores": scores, "seconds": seconds}
        return answers
