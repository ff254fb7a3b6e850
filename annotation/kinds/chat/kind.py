"""The live chat kind: an annotator chats with a chat system behind an OpenAI-compatible endpoint,
flags its replies as they arrive and rates the conversation at the end (`base.TaskKind`; issue 38).

Its HITs are conversations to be had (layout.py), its page a chat (page.py, chat.js, views.py), its
answers ConversationRating rows of the live conversation (answers.py), so the conversations and their
ratings are read by the report's Conversations section as imported ones are.
"""

from django.db.models import Avg, Count, Max

from annotation.kinds.base import TaskKind
from annotation.kinds.chat import page
from annotation.kinds.chat.answers import chat_rows, chat_unanswered
from annotation.kinds.chat.command import add_chat_arguments, chat_survey_from_options
from annotation.kinds.chat.effort import effort_summary
from annotation.kinds.chat.form import (
    CHAT_FIELDS,
    chat_fields,
    chat_fields_problems,
    chat_initial,
    chat_survey_from_form,
)
from annotation.kinds.chat.layout import chat_layout
from annotation.kinds.conversation.questions import WHOLE_ASPECTS, default_aspect_specs, split_aspects
from annotation.kinds.conversation.whole_ratings import WholeConversationRatings
from annotation.kinds.timing import task_seconds
from annotation.models import ChatSurveySettings, ConversationRating, LiveChat, Survey

CHAT_INSTRUCTIONS = (
    "You will chat with a chatbot. Talk with it naturally, as you would with a person, about anything "
    "you like (or the topic shown). After each of its replies, tick anything wrong with that reply "
    "(leave all unticked when nothing is). When you have written enough messages, press “End "
    "conversation” and answer a few questions about the whole conversation."
)
# Seconds per annotator message: reading the reply, thinking, typing.
SECONDS_PER_MESSAGE = 25


class ChatKind(WholeConversationRatings, TaskKind):
    name = Survey.TaskType.CHAT
    report_section = "conversations"
    wording = {
        "heading": "Chat with a chatbot",
        "title": "Chat with a chatbot and rate the conversation",
        "item": ("conversation", "conversations"),
        "verb": "chat",
        "page_title": "Join a live chat study",
        "study": "Live chat study",
        "task_title": "Live chat task",
        "answers": "Conversation ratings",
        "answers_lower": "conversation ratings",
    }
    description = "Chat with a chatbot, flag its bad replies and rate the conversation."
    recorded = "Your messages and the chatbot's replies are stored as they are sent, with their times."
    describes_aspects = True
    default_question = WHOLE_ASPECTS[0][1]
    export_name = "conversation_ratings"
    choice_template = "annotation/kinds/rating/_scale.html"
    block_templates = (page.BLOCK_TEMPLATE, page.RADIOS_TEMPLATE)
    page_modules = (page,)
    page_script = "annotation/kinds/chat/chat.js"
    page_item = ("conversation", "conversations")
    quality_intro_template = "annotation/kinds/chat/_quality_effort.html"
    own_fields = CHAT_FIELDS

    def form_fields(self, owner):
        return chat_fields(owner)

    def form_problems(self, data):
        return chat_fields_problems(data)

    def form_create(self, *, data, common):
        return chat_survey_from_form(data=data, common=common)

    def form_initial(self, survey):
        return chat_initial(survey)

    def instructions(self, *, allow_tie=True):
        return CHAT_INSTRUCTIONS

    def default_aspects(self, dataset):
        return default_aspect_specs()

    def survey_problem(self, survey):
        return None  # the dataset may start empty: it receives the conversations

    def planned_units(self, dataset):
        return 1

    def estimate(self, *, n_contexts, n_systems, contexts_in_first_hit, regular, overlap, settings):
        turns = settings.get("max_turns") or 10
        seconds = task_seconds(answers=settings["n_aspects"]) + turns * SECONDS_PER_MESSAGE
        return 1, seconds, n_contexts * settings["n_aspects"] * settings["assignments_per_hit"]

    def hits_layout(self, *, survey, contexts):
        return chat_layout(survey=survey)

    def estimated_seconds(self, *, items, n_aspects, survey=None):
        settings = getattr(survey, "chat_settings", None) if survey is not None else None
        turns = settings.max_turns if settings else 10
        return task_seconds(answers=n_aspects) + turns * SECONDS_PER_MESSAGE

    def scales(self, survey):
        return page.chat_scales(survey)

    def page_blocks(self, *, survey, items, scales, previous, missing):
        return page.chat_blocks(survey=survey, items=items, scales=scales, previous=previous, missing=missing)

    def unanswered(self, *, items, answers, aspects):
        return chat_unanswered(items=items, answers=answers, aspects=aspects)

    def missing_message(self, numbers):
        return "Please answer every question about the conversation (marked below)."

    def validated_rows(self, *, assignment, annotator, survey, items, answers, aspects):
        return chat_rows(
            assignment=assignment, annotator=annotator, survey=survey, items=items, answers=answers, aspects=aspects
        )

    def answer_model(self):
        return ConversationRating

    def add_command_arguments(self, parser):
        add_chat_arguments(parser)

    def command_create(self, *, dataset, owner, options):
        return chat_survey_from_options(dataset=dataset, owner=owner, options=options)

    def quality_extras(self, survey):
        return {"chat_effort": effort_summary(survey)}

    def fingerprint_parts(self, survey):
        counts = ConversationRating.objects.filter(survey=survey).aggregate(n=Count("id"), mean=Avg("score"))
        # The effort rule's thresholds (a researcher may change them) and the chats it judges.
        settings = ChatSurveySettings.objects.filter(survey=survey).values_list(
            "effort_max_short_share", "effort_max_pasted_share", "effort_max_idle_seconds"
        )
        chats = LiveChat.objects.filter(assignment__hit__survey=survey).aggregate(n=Count("id"), last=Max("updated_at"))
        return ["chat", counts["n"], counts["mean"], list(settings), chats["n"], str(chats["last"])]

    def simulated_answers(self, annotator, *, items, aspects, survey):
        whole, _, _ = split_aspects(list(aspects.values()) if isinstance(aspects, dict) else list(aspects))
        return {
            item.pk: {"scores": {a.key: str(annotator.rng.randint(a.scale_min, a.scale_max)) for a in whole}}
            for item in items
        }
