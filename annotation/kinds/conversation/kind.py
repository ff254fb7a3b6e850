"""The conversation kind: an annotator reads whole conversations, flags (or rates) each of the
bot's turns and rates the conversation as a whole (`base.TaskKind`; issue 37).

One kind for both levels, as ParlAI's model-chat evaluation and FED ask both of one reading: a
survey whose questions are all whole-conversation ones is a whole-conversation rating study, one
whose questions are all per turn a turn-annotation study (`Aspect.per_turn`).
"""

from django.db.models import Avg, Count

from annotation.kinds.base import TaskKind
from annotation.kinds.conversation import page
from annotation.kinds.conversation.answers import conversation_rows, conversation_unanswered
from annotation.kinds.conversation.layout import conversation_layout, survey_conversations, system_turns
from annotation.kinds.conversation.questions import WHOLE_ASPECTS, default_aspect_specs, split_aspects
from annotation.kinds.conversation.simulation import simulated_conversation_answers
from annotation.kinds.conversation.storing import ratings_insert
from annotation.kinds.conversation.whole_ratings import WholeConversationRatings
from annotation.kinds.timing import task_seconds
from annotation.models import Conversation, ConversationRating, ConversationTurn, Survey

CONVERSATION_INSTRUCTIONS = (
    "You will read whole conversations between a chatbot (Bot) and a partner. Under each of the bot's "
    "turns, tick anything wrong with that turn (leave all unticked when nothing is), then rate the whole "
    "conversation. The partner's turns are not rated. Some conversations are attention checks: read "
    "every turn."
)
# Turns per conversation assumed by the survey form's estimate before a dataset is read.
TYPICAL_TURNS = 14


class ConversationKind(WholeConversationRatings, TaskKind):
    name = Survey.TaskType.CONVERSATION
    # The report section built beside this kind (issue 37's "Conversations"; analysis/sections).
    report_section = "conversations"
    wording = {
        "heading": "Rate conversations with a chatbot",
        "title": "Read conversations with a chatbot and rate them",
        "item": ("conversation", "conversations"),
        "verb": "rate",
        "page_title": "Join a conversation rating study",
        "study": "Conversation rating study",
        "task_title": "Conversation rating task",
        "answers": "Conversation ratings",
        "answers_lower": "conversation ratings",
    }
    description = "Read conversations with a chatbot, flag its bad turns and rate each conversation."
    describes_aspects = True
    default_question = WHOLE_ASPECTS[0][1]
    export_name = "conversation_ratings"
    choice_template = "annotation/kinds/rating/_scale.html"
    block_templates = (page.BLOCK_TEMPLATE, "annotation/kinds/conversation/_radios.html")
    page_modules = (page,)
    page_item = ("conversation", "conversations")

    def instructions(self, *, allow_tie=True):
        return CONVERSATION_INSTRUCTIONS

    def default_aspects(self, dataset):
        scales = {
            key: (low, high)
            for key, low, high in dataset.conversation_aspects.values_list("key", "scale_min", "scale_max")
        }
        return default_aspect_specs(scales)

    def survey_problem(self, survey):
        if not Conversation.objects.filter(dataset_id=survey.dataset_id).exists():
            return f"Dataset {survey.dataset.name!r} has no conversations: import some first."
        return None

    def planned_units(self, dataset):
        return dataset.conversations.count()

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        per_hit = contexts_in_first_hit + settings["attention_checks_per_hit"]
        turns = settings.get("turns_per_conversation") or TYPICAL_TURNS
        seconds = task_seconds(answers=per_hit * settings["n_aspects"], turns_read=per_hit * turns)
        return per_hit, seconds, n_contexts * settings["n_aspects"] * settings["assignments_per_hit"]

    def hits_layout(self, *, survey, contexts):
        return conversation_layout(survey=survey)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        """Reading counts: every turn of an average conversation of the survey, each bot turn's flags
        and per-turn questions, and the whole-conversation questions."""
        if survey is None:
            return task_seconds(answers=items * n_aspects, turns_read=items * TYPICAL_TURNS)
        conversations = survey_conversations(survey)
        n = max(len(conversations), 1)
        turns = ConversationTurn.objects.filter(conversation_id__in=conversations)
        n_turns = turns.count() / n
        n_bot = sum(len(t) for t in system_turns(conversations).values()) / n
        whole, turn_scales, flags = split_aspects(list(survey.aspects.all()))
        return task_seconds(
            answers=round(items * (len(whole) + n_bot * len(turn_scales))),
            turns_read=round(items * n_turns),
            flags=round(items * n_bot * len(flags)),
        )

    def scales(self, survey):
        return page.conversation_scales(survey)

    def page_blocks(self, *, survey, items, scales, previous, missing):
        return page.conversation_blocks(items=items, scales=scales, previous=previous, missing=missing)

    def describe(self, survey):
        return self.description

    def unanswered(self, *, items, answers, aspects):
        return conversation_unanswered(items=items, answers=answers, aspects=aspects)

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        return conversation_rows(
            assignment=assignment, annotator=annotator, survey=survey, items=items, answers=answers, aspects=aspects
        )

    def answer_model(self):
        return ConversationRating

    def store_answers(self, rows):
        ratings_insert(rows)

    def fingerprint_parts(self, survey):
        counts = ConversationRating.objects.filter(survey=survey).aggregate(n=Count("id"), mean=Avg("score"))
        return ["conversation", counts["n"], counts["mean"]]

    def simulated_answers(self, annotator, *, items, aspects, survey):
        return simulated_conversation_answers(annotator, items=items, aspects=aspects)
