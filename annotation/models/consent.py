"""Consent and questionnaires: what a survey asks before and after its tasks, and what each
annotator answered.

`SurveyConsent` holds the researcher's consent text (with a version kept on every answer) and the
pre- and post-task questions. `ConsentResponse` rows are appended, never edited: an ethics board
can see which version of the text each person accepted or declined, and when. A questionnaire is
answered once per annotator, survey and phase. `ParticipantDeletion` is the audit line of a
deletion on request: who asked for it, when, and how many rows went (never the person's id).
"""

from django.conf import settings
from django.db import models

from annotation.models.ratings import Annotator
from annotation.models.surveys import Survey


class SurveyConsent(models.Model):
    """A survey's consent page and questionnaires (questions as a list of dicts, see
    `annotation.services.questionnaire_spec`)."""

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="consent_setup")
    consent_text = models.TextField(blank=True, help_text="Shown before any task; empty: no consent page.")
    consent_version = models.CharField(max_length=40, blank=True)
    pre_questions = models.JSONField(default=list, blank=True)
    post_questions = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "consent and questionnaires"
        verbose_name_plural = "consent and questionnaires"

    def __str__(self):
        return f"consent and questionnaires of {self.survey}"


class ConsentResponse(models.Model):
    """One answer on the consent page: accepted or declined, with the text's version."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="consent_responses")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="consent_responses")
    version = models.CharField(max_length=40)
    accepted = models.BooleanField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "annotator", "pk"]

    def __str__(self):
        return f"{'accepted' if self.accepted else 'declined'} v{self.version} ({self.survey})"


class QuestionnaireResponse(models.Model):
    """An annotator's answers to one of a survey's questionnaires: `{question key: answer}`, where
    an answer is a string, a list of strings (multiple choice), a number, or None ("prefer not to say")."""

    class Phase(models.TextChoices):
        PRE = "pre", "Before the tasks"
        POST = "post", "After the tasks"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="questionnaire_responses")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="questionnaire_responses")
    phase = models.CharField(max_length=4, choices=Phase.choices)
    answers = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "phase", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "annotator", "phase"], name="questionnaire_once_per_phase"),
        ]

    def __str__(self):
        return f"{self.phase} questionnaire of {self.survey}"


class ParticipantDeletion(models.Model):
    """The audit line of a participant's data deleted on request (names no one: `pseudonym` is the
    survey export's name for them at the time, and `removed` counts rows per table)."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="participant_deletions")
    pseudonym = models.CharField(max_length=40)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    removed = models.JSONField(default=dict)
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "pk"]

    def __str__(self):
        return f"data of {self.pseudonym} deleted from {self.survey}"
