from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.ratings import Annotator
from annotation.models.surveys import Survey


class ExclusionDecision(models.Model):
    """Whether an annotator's ratings in a survey count. Every decision is kept, as an audit trail.

    The effective decision for (survey, annotator): the latest manual override if there is one
    and no later `reset`; otherwise the latest automatic one. Automatic decisions are written
    only when the rules' outcome changes, so the trail reads as a history, not a log of runs.
    """

    class Source(models.TextChoices):
        AUTO = "auto", "Automatic rule"
        MANUAL = "manual", "Researcher override"
        RESET = "reset", "Back to the automatic rule"

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="exclusion_decisions")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="exclusion_decisions")
    excluded = models.BooleanField()
    reasons = models.JSONField(default=list, blank=True, help_text="The rules that fired: [{rule, detail, ...}].")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.AUTO)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    note = models.TextField(blank=True, help_text="The researcher's reason for an override.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey", "annotator", "created_at", "id"]
        indexes = [models.Index(fields=["survey", "annotator", "created_at"])]
        constraints = [
            # An override without a reason is not an audit trail.
            models.CheckConstraint(condition=Q(source="auto") | ~Q(note=""), name="exclusion_override_has_note"),
        ]

    def __str__(self):
        verb = "excluded" if self.excluded else "accepted"
        return f"{self.annotator} {verb} in {self.survey} ({self.source})"


class QualityReport(models.Model):
    """The cached quality report of a survey (agreement, attention checks, timing, exclusions).

    `fingerprint` summarises the inputs it was computed from (counts and last ids of ratings,
    attention answers and decisions; rejected assignments; the survey's settings); a report
    whose fingerprint no longer matches the survey's is stale and gets recomputed.
    """

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="quality_report")
    data = models.JSONField(default=dict)
    fingerprint = models.CharField(max_length=200, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="Time the last computation took.")

    def __str__(self):
        return f"quality report of {self.survey}"
