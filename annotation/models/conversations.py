"""Whole conversations of a system with a partner, and the human judgements made of them (issue 37).

A dataset holds either contexts with candidate responses (annotation.models.datasets) or
conversations, or both. A conversation is one system's dialogue with a partner (a person or another
bot): ordered turns, the turns of speaker `system` being the evaluated system's. Conversations are
rated as a whole or turn by turn (ConversationRating), and compared side by side (ACUTE-Eval,
ConversationJudgement). Each aspect keeps its own scale per dataset (ConversationAspect): FED and
DSTC9 rate some aspects 0-1, others 1-3 and the overall impression 1-5.

Imported ratings and judgements have no survey; the conversation task kinds add the link to the
survey that collected them.
"""

from django.db import models
from django.db.models import F, Q

from annotation.models.datasets import Dataset, System
from annotation.models.ratings import Annotator, Assignment
from annotation.models.surveys import Survey

SYSTEM_SPEAKER = "system"  # the speaker name of the evaluated system's turns; any other is its partner


class Conversation(models.Model):
    class Source(models.TextChoices):
        IMPORTED = "imported", "Imported from a file"
        LIVE = "live", "Collected in live chat"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=200, help_text="The conversation_id in the imported file.")
    position = models.PositiveIntegerField(help_text="Order of the conversation in its file.")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="conversations")
    # Conversations meant to be compared share a seed (the same persona, topic or opening).
    seed = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.IMPORTED)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="conversation_unique_id_per_dataset"),
            models.UniqueConstraint(fields=["dataset", "position"], name="conversation_unique_position"),
            models.CheckConstraint(condition=~Q(external_id=""), name="conversation_id_not_empty"),
        ]
        indexes = [models.Index(fields=["dataset", "system"])]

    def __str__(self):
        return f"{self.dataset.name}:{self.external_id}"


class ConversationTurn(models.Model):
    """One turn; `index` is its 0-based place in the conversation, as rating files name it."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    speaker = models.CharField(max_length=100)
    text = models.TextField(blank=True)

    class Meta:
        ordering = ["conversation", "index"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "index"], name="conversationturn_unique_index"),
            models.CheckConstraint(condition=~Q(speaker=""), name="conversationturn_speaker_not_empty"),
        ]

    def __str__(self):
        return f"{self.conversation} turn {self.index}"

    @property
    def is_system(self):
        return self.speaker == SYSTEM_SPEAKER


class ConversationAspect(models.Model):
    """The scale of one aspect of a dataset's conversation ratings, the same for every rating of it."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="conversation_aspects")
    key = models.SlugField(max_length=50)
    scale_min = models.IntegerField(default=1)
    scale_max = models.IntegerField(default=5)

    class Meta:
        ordering = ["dataset", "key"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "key"], name="conversationaspect_unique_key"),
            models.CheckConstraint(condition=Q(scale_max__gt=F("scale_min")), name="conversationaspect_scale_ordered"),
        ]

    def __str__(self):
        return f"{self.key} ({self.scale_min}-{self.scale_max})"


class ConversationRating(models.Model):
    """One annotator's score of a whole conversation (`turn` empty) or of one system turn of it."""

    # Indexes kept to what reads use: a submission writes ~540 rows (flags of every bot turn), and
    # each index is a write per row. `conversation` and `survey` are served by the (conversation,
    # aspect) and (survey, aspect) indexes below, which lead with them; `aspect` alone (a few values)
    # by none: no single-column index for the three.
    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="conversation_ratings")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="ratings", db_index=False)
    # A system turn of `conversation` (the import checks both); empty for the whole conversation.
    turn = models.ForeignKey(ConversationTurn, null=True, blank=True, on_delete=models.CASCADE, related_name="ratings")
    aspect = models.SlugField(max_length=50, default="overall", db_index=False)
    score = models.IntegerField()
    seconds = models.FloatField(null=True, blank=True, help_text="Time the annotator spent on it.")
    # The survey and slot that collected it (annotation/kinds/conversation); empty when imported.
    survey = models.ForeignKey(
        Survey, null=True, blank=True, on_delete=models.CASCADE, related_name="conversation_ratings", db_index=False
    )
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="conversation_ratings"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "turn", "annotator"]
        # Four constraints because NULLs are distinct: whole conversations and turns, imported
        # (no survey: once per annotator in the dataset) and collected (once per survey).
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "conversation", "aspect"],
                condition=Q(turn__isnull=True, survey__isnull=True),
                name="conversationrating_once_per_conversation",
            ),
            models.UniqueConstraint(
                fields=["annotator", "turn", "aspect"],
                condition=Q(turn__isnull=False, survey__isnull=True),
                name="conversationrating_once_per_turn",
            ),
            models.UniqueConstraint(
                fields=["survey", "annotator", "conversation", "aspect"],
                condition=Q(turn__isnull=True, survey__isnull=False),
                name="conversationrating_once_per_survey_conversation",
            ),
            models.UniqueConstraint(
                fields=["survey", "annotator", "turn", "aspect"],
                condition=Q(turn__isnull=False, survey__isnull=False),
                name="conversationrating_once_per_survey_turn",
            ),
        ]
        indexes = [models.Index(fields=["conversation", "aspect"]), models.Index(fields=["survey", "aspect"])]

    def __str__(self):
        where = "conversation" if self.turn_id is None else "turn"
        return f"{self.annotator} gave {self.score} ({self.aspect}, {where})"


class ConversationJudgement(models.Model):
    """One annotator's choice between two conversations of different systems (ACUTE-Eval) on a question.

    Imported judgements keep the file's order and have no known left/right position.
    """

    class Winner(models.TextChoices):
        A = "a", "A"
        B = "b", "B"
        TIE = "tie", "Tie"

    annotator = models.ForeignKey(Annotator, on_delete=models.PROTECT, related_name="conversation_judgements")
    conversation_a = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    conversation_b = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    winner = models.CharField(max_length=3, choices=Winner.choices)
    question = models.CharField(max_length=300)
    reason = models.CharField(max_length=200, blank=True)
    position_known = models.BooleanField(default=False)
    seconds = models.FloatField(null=True, blank=True)
    # The survey and slot that collected it (annotation/kinds/acute: `conversation_a` was shown on
    # the left, `position_known` true); empty when imported.
    survey = models.ForeignKey(
        Survey, null=True, blank=True, on_delete=models.CASCADE, related_name="conversation_judgements"
    )
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="conversation_judgements"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation_a", "conversation_b", "annotator"]
        constraints = [
            models.UniqueConstraint(
                fields=["annotator", "conversation_a", "conversation_b", "question"],
                condition=Q(survey__isnull=True),
                name="conversationjudgement_once_per_pair",
            ),
            models.UniqueConstraint(
                fields=["survey", "annotator", "conversation_a", "conversation_b", "question"],
                condition=Q(survey__isnull=False),
                name="conversationjudgement_once_per_survey_pair",
            ),
            models.CheckConstraint(
                condition=~Q(conversation_a=F("conversation_b")), name="conversationjudgement_two_conversations"
            ),
            models.CheckConstraint(condition=~Q(question=""), name="conversationjudgement_question_not_empty"),
        ]

    def __str__(self):
        return f"{self.annotator}: {self.winner} ({self.question[:40]})"
