from django.conf import settings
from django.db import models

from annotation.models.ratings import Annotator, Assignment, WrittenResponse
from annotation.models.surveys import Survey


class ReviewAction(models.Model):
    """One researcher (or automatic) decision about an annotator's work, kept as an audit trail.

    Rows are only ever added: the latest `exclude`/`include` row for an annotator in a survey is the
    current state, and every earlier decision stays visible with who made it, when and why.
    """

    class Action(models.TextChoices):
        APPROVE = "approve", "Approve assignment"
        REJECT = "reject", "Reject assignment"
        EXCLUDE = "exclude", "Exclude annotator's ratings"
        INCLUDE = "include", "Include annotator's ratings again"
        FLAG = "flag", "Flag assignment"
        BONUS = "bonus", "Bonus"
        BLOCK = "block", "Block annotator"
        ACCEPT_WRITTEN = "accept_written", "Accept written response"
        REJECT_WRITTEN = "reject_written", "Reject written response"

    survey = models.ForeignKey(Survey, null=True, blank=True, on_delete=models.CASCADE, related_name="review_actions")
    annotator = models.ForeignKey(
        Annotator, null=True, blank=True, on_delete=models.CASCADE, related_name="review_actions"
    )
    assignment = models.ForeignKey(
        Assignment, null=True, blank=True, on_delete=models.CASCADE, related_name="review_actions"
    )
    written_response = models.ForeignKey(
        WrittenResponse, null=True, blank=True, on_delete=models.CASCADE, related_name="review_actions"
    )
    action = models.CharField(max_length=20, choices=Action.choices)
    reason = models.TextField(blank=True)
    amount_cents = models.PositiveIntegerField(null=True, blank=True)
    # None for decisions the app took itself (an attention-check policy).
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["survey", "annotator", "action"])]

    def __str__(self):
        who = self.actor.username if self.actor_id else "system"
        return f"{self.action} by {who}"
