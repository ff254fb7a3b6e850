"""What the app knows about a survey's life on Amazon Mechanical Turk.

Credentials are never stored here: boto3 reads them from its standard chain (environment,
profile, role). Only MTurk's own identifiers (HIT type, HIT, assignment, qualification ids) are kept.
"""

from django.db import models
from django.db.models import Q

from annotation.models.ratings import HIT, Annotator, Assignment
from annotation.models.surveys import Survey

# MTurk's documented system qualification type ids.
QUAL_APPROVAL_RATE = "000000000000000000L0"
QUAL_NUMBER_APPROVED = "00000000000000000040"
QUAL_LOCALE = "00000000000000000071"


class MTurkSettings(models.Model):
    """A survey's MTurk configuration: endpoint, HIT type properties and worker requirements."""

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="mturk")
    sandbox = models.BooleanField(default=True, help_text="Publish to the requester sandbox (no real money).")
    title = models.CharField(max_length=128)
    description = models.CharField(max_length=2000)
    keywords = models.CharField(max_length=1000, blank=True, default="dialogue, rating, conversation, survey")
    auto_approval_delay_seconds = models.PositiveIntegerField(default=3 * 24 * 3600)
    lifetime_seconds = models.PositiveIntegerField(default=7 * 24 * 3600)
    frame_height = models.PositiveIntegerField(default=0, help_text="0 lets MTurk size the frame to the page.")
    locales = models.CharField(
        max_length=200, blank=True, default="US", help_text="Comma-separated ISO country codes; empty for any."
    )
    min_approval_rate = models.PositiveIntegerField(null=True, blank=True, default=95)
    min_approved_hits = models.PositiveIntegerField(null=True, blank=True, default=500)
    use_exclusion_qualification = models.BooleanField(default=True)
    # Filled in by publishing; MTurk ids, not secrets.
    exclusion_qualification_id = models.CharField(max_length=100, blank=True)
    hit_type_id = models.CharField(max_length=100, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "MTurk settings"
        verbose_name_plural = "MTurk settings"
        constraints = [
            models.CheckConstraint(condition=~Q(title=""), name="mturksettings_title_not_empty"),
        ]

    def __str__(self):
        return f"MTurk settings of {self.survey}"

    @property
    def locale_list(self):
        return [code.strip().upper() for code in self.locales.split(",") if code.strip()]


class MTurkExclusionQualification(models.Model):
    """The requester's custom qualification that marks excluded workers; one per endpoint.

    Shared by every survey, so a worker blocked for one survey cannot take later ones either.
    """

    sandbox = models.BooleanField(unique=True)
    qualification_type_id = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "MTurk exclusion qualification"

    def __str__(self):
        return f"{'sandbox' if self.sandbox else 'live'} exclusion {self.qualification_type_id}"


class MTurkHIT(models.Model):
    """A published HIT: saved the moment MTurk answers, so a retried publish skips it."""

    hit = models.OneToOneField(HIT, on_delete=models.CASCADE, related_name="mturk")
    mturk_id = models.CharField(max_length=100, unique=True, help_text="MTurk's HITId.")
    hit_type_id = models.CharField(max_length=100)
    group_id = models.CharField(max_length=100, blank=True, help_text="MTurk's HITGroupId (the worker site's link).")
    request_token = models.CharField(max_length=64)
    sandbox = models.BooleanField()
    status = models.CharField(max_length=30, blank=True, help_text="MTurk's HITStatus as last seen.")
    # MTurk's MaxAssignments for this HIT as MTurk answered it: the task page never holds more slots.
    max_assignments = models.PositiveIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = "MTurk HIT", "MTurk HITs"

    def __str__(self):
        return self.mturk_id

    @property
    def slot_limit(self):
        """How many app slots this HIT may hold (rows published before the field: the survey's setting)."""
        return self.max_assignments or self.hit.survey.assignments_per_hit

    @property
    def worker_url(self):
        """Where workers find the HIT: the HIT group's page on the sandbox or live worker site."""
        if not self.group_id:
            return ""
        site = "https://workersandbox.mturk.com" if self.sandbox else "https://worker.mturk.com"
        return f"{site}/projects/{self.group_id}/tasks"


class MTurkAssignment(models.Model):
    """An assignment as MTurk reports it (sync), matched to the app's assignment slot.

    `confirmed` is the only proof that a rating came from a real MTurk worker: MTurk listed
    this assignment id with this worker id on this HIT, and the app's slot has the same ids.
    A worker id typed into a task URL by hand never gets here.
    """

    mturk_id = models.CharField(max_length=100, unique=True, help_text="MTurk's AssignmentId.")
    mturk_hit = models.ForeignKey(MTurkHIT, on_delete=models.CASCADE, related_name="assignments")
    worker_id = models.CharField(max_length=100)
    status = models.CharField(max_length=20, help_text="Submitted, Approved or Rejected.")
    submitted_at = models.DateTimeField(null=True, blank=True)
    assignment = models.OneToOneField(
        Assignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="mturk"
    )
    confirmed = models.BooleanField(default=False)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["mturk_hit", "mturk_id"]
        verbose_name = "MTurk assignment"

    def __str__(self):
        return f"{self.mturk_id} ({self.status})"


class MTurkBonus(models.Model):
    """A bonus paid (or being paid); the token makes a repeated payment a no-op on both sides."""

    mturk_assignment = models.ForeignKey(MTurkAssignment, on_delete=models.PROTECT, related_name="bonuses")
    amount_cents = models.PositiveIntegerField()
    reason = models.TextField()
    request_token = models.CharField(max_length=64, unique=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = "MTurk bonus", "MTurk bonuses"
        constraints = [models.CheckConstraint(condition=Q(amount_cents__gt=0), name="mturkbonus_positive")]

    def __str__(self):
        return f"{self.amount_cents}c to {self.mturk_assignment}"


class MTurkBlock(models.Model):
    """An annotator given the exclusion qualification on one endpoint, with the reason (audit)."""

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="mturk_blocks")
    sandbox = models.BooleanField()
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "MTurk block"
        constraints = [models.UniqueConstraint(fields=["annotator", "sandbox"], name="mturkblock_once")]

    def __str__(self):
        return f"{self.annotator} blocked"


class MTurkDraft(models.Model):
    """The answers given so far to an assignment open in MTurk's frame, kept on the server.

    The local task page keeps them in the browser (localStorage); inside MTurk's frame our page is
    a third-party document, whose storage a browser blocking third-party cookies refuses, so the
    frame's script (static/annotation/mturk_task.js) sends them here as they are given. Restored
    when the worker reloads the HIT; deleted once the assignment is stored.
    """

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="mturk_draft")
    fields = models.JSONField(default=dict, help_text="The task form's answer fields, as posted.")
    saved_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "MTurk draft"

    def __str__(self):
        return f"draft of assignment {self.assignment_id}"
