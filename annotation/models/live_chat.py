"""Live chat studies (issue 38): an annotator chats with a chat system, then rates the conversation.

A chat survey's settings (`ChatSurveySettings`) name its chat systems; each HIT is one conversation
with one of them (`ChatHIT`), laid out balanced across the systems. When an annotator opens a
HIT's task, a `LiveChat` is made with a `Conversation` of the dataset (source "live", system: the
dataset System named after the chat system), and every turn is a ConversationTurn the moment it
exists: the annotator's before the system is asked, the system's when it answers.

Each request to the system is a `ChatAttempt`. At most one attempt per chat is pending (a partial
unique constraint: the one-in-flight rule, held by the database); a failed attempt is kept for the
researcher and is no turn. The annotator's message carries a key made by the page (`client_key`),
unique per chat, so a double click, a retried request or a second tab stores it once.
"""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from annotation.models.chat_systems import ChatSystem
from annotation.models.conversations import Conversation
from annotation.models.datasets import System
from annotation.models.ratings import HIT, Annotator, Assignment
from annotation.models.surveys import Survey


class ChatSurveySettings(models.Model):
    class Opening(models.TextChoices):
        ANNOTATOR = "annotator", "The annotator writes first"
        BOT = "bot", "The system writes first"

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="chat_settings")
    # PROTECT: a chat system a survey talks to cannot be deleted from under it (the page refuses, saying why).
    chat_systems = models.ManyToManyField(ChatSystem, related_name="chat_surveys")
    opening = models.CharField(max_length=10, choices=Opening.choices, default=Opening.ANNOTATOR)
    min_turns = models.PositiveIntegerField(default=3, help_text="Annotator messages before the chat may end.")
    max_turns = models.PositiveIntegerField(default=10, help_text="Annotator messages at most.")
    conversations_per_system = models.PositiveIntegerField(default=5)
    # What the annotator reads before they write (a persona or topic); empty: none.
    seed_text = models.CharField(max_length=500, blank=True)
    # The effort rule (quality, annotation/kinds/chat/effort_rule.py): a chat is left out of analysis
    # when one of its measures passes its threshold; each is off when empty, and all are off by default
    # (a flag is evidence, and a researcher opts in to act on it).
    effort_max_short_share = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Leave out a chat more than this share of whose annotator messages have fewer than 3 words.",
    )
    effort_max_pasted_share = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Leave out a chat more than this share of whose annotator messages were mostly pasted.",
    )
    effort_max_idle_seconds = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0)],
        help_text="Leave out a chat with a longer gap without typing while a message was being written.",
    )

    class Meta:
        verbose_name_plural = "chat survey settings"
        constraints = [
            models.CheckConstraint(condition=Q(min_turns__gte=1), name="chatsettings_min_turns_positive"),
            models.CheckConstraint(condition=Q(max_turns__gte=models.F("min_turns")), name="chatsettings_max_ge_min"),
        ]

    def __str__(self):
        return f"chat settings of {self.survey}"


class ChatHIT(models.Model):
    """Which chat system a HIT's conversation is with (never shown to the annotator)."""

    hit = models.OneToOneField(HIT, on_delete=models.CASCADE, related_name="chat")
    chat_system = models.ForeignKey(ChatSystem, on_delete=models.PROTECT, related_name="chat_hits")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="+")

    def __str__(self):
        return f"{self.hit} with {self.chat_system}"


class LiveChat(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="live_chats")
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="live_chats")
    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="live_chat")
    chat_system = models.ForeignKey(ChatSystem, on_delete=models.PROTECT, related_name="live_chats")
    # Set when the annotator pressed "End conversation" (or reached the maximum): no more messages.
    ended_at = models.DateTimeField(null=True, blank=True)
    # Per-turn flags ticked under the bot's messages, kept as ticked: {"<turn index>": ["flag key", ...]}.
    flags = models.JSONField(default=dict, blank=True)
    # Per-turn ratings given under the bot's messages, kept as given: {"<turn index>": {"aspect key": score}}.
    turn_scores = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "annotator"], name="livechat_one_per_assignment_annotator")
        ]

    def __str__(self):
        return f"live chat {self.pk} ({self.conversation})"


class ChatAttempt(models.Model):
    """One request to the system for the reply to annotator turn `user_turn` (index; -1: the opening)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for the reply"
        OK = "ok", "Answered"
        FAILED = "failed", "Failed"

    live_chat = models.ForeignKey(LiveChat, on_delete=models.CASCADE, related_name="attempts")
    user_turn = models.IntegerField()
    number = models.PositiveIntegerField(default=1)
    # The page's key of the annotator's message (first attempt only): a message is stored once.
    client_key = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    failure = models.CharField(max_length=20, blank=True)
    message = models.CharField(max_length=500, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    # A repeat the annotator asked for after a failure (or after a reply that never came).
    retry = models.BooleanField(default=False)
    # How the annotator's message was written, as the page measured it (first attempt only; the effort
    # rule's evidence): {"pasted_chars": n, "idle_ms": n}; empty when the page sent none.
    telemetry = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["live_chat", "user_turn", "number"]
        constraints = [
            models.UniqueConstraint(fields=["live_chat", "user_turn", "number"], name="chatattempt_unique_number"),
            models.UniqueConstraint(
                fields=["live_chat"], condition=Q(status="pending"), name="chatattempt_one_in_flight"
            ),
            models.UniqueConstraint(
                fields=["live_chat", "client_key"], condition=~Q(client_key=""), name="chatattempt_message_once"
            ),
        ]

    def __str__(self):
        return f"attempt {self.number} for turn {self.user_turn} of {self.live_chat_id} ({self.status})"


def unfinished_live_conversations():
    """Live conversations not (yet) handed in: running, or abandoned (their task expired or was
    returned). Kept, with their attempts, and left out of analysis (the report's Conversations)."""
    finished = Assignment.FINISHED
    return Conversation.objects.filter(source=Conversation.Source.LIVE).exclude(
        live_chat__assignment__status__in=finished
    )


def live_summary(conversation):
    """For the researcher's page of a conversation: a live chat's state, its system and every request
    made to it (failed ones included, which are no turns); None for an imported conversation."""
    if conversation.source != Conversation.Source.LIVE:
        return None
    chat = (
        LiveChat.objects.filter(conversation=conversation)
        .select_related("assignment", "chat_system", "annotator")
        .first()
    )
    if chat is None:
        return None
    status = chat.assignment.status
    if status in Assignment.FINISHED and chat.assignment.annotator_id == chat.annotator_id:
        state = "finished"
    elif status == Assignment.Status.ACTIVE and chat.assignment.annotator_id == chat.annotator_id:
        state = "in progress" if chat.ended_at is None else "ended, final questions not yet answered"
    else:
        state = "abandoned (left out of analysis)"
    return {
        "state": state,
        "chat_system": chat.chat_system.name,
        "ended_at": chat.ended_at,
        "attempts": list(chat.attempts.order_by("user_turn", "number")),
    }
