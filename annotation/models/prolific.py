"""What the app knows about a survey's study on Prolific.

The API token is never stored: the client reads it from the environment on each use. Only
Prolific's own identifiers (study, submission, bulk bonus payment ids) and the statuses last
seen are kept here.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.ratings import Annotator
from annotation.models.surveys import Survey


class ProlificStudy(models.Model):
    """A survey published as one Prolific study (its places are the survey's assignment slots)."""

    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="prolific")
    study_id = models.CharField(max_length=64, blank=True, help_text="Prolific's study id (empty until created).")
    status = models.CharField(max_length=30, blank=True, help_text="Prolific's study status as last seen.")
    reward_cents = models.PositiveIntegerField(help_text="Reward per participant, in the account's currency.")
    estimated_minutes = models.PositiveIntegerField(help_text="Estimated median completion time.")
    currency = models.CharField(max_length=3, default="GBP")
    places = models.PositiveIntegerField(default=0, help_text="total_available_places as last sent.")
    completed_code = models.CharField(max_length=32)
    failed_check_code = models.CharField(max_length=32)
    # The code a participant who declines the consent page goes back with (Prolific's NO_CONSENT
    # code type, whose action asks them to return the study); empty on studies made before it.
    no_consent_code = models.CharField(max_length=32, blank=True)
    measured_median_seconds = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Median time of finished submissions, as Prolific measured it at the last sync.",
    )
    last_synced_at = models.DateTimeField(null=True, blank=True)
    # A random tag in the draft's internal name, saved before the draft is asked for: with the
    # survey's pk it names this row's draft among all the account's studies, even when two RateLab
    # databases (a reset, a second server) share one Prolific account and number surveys alike.
    draft_tag = models.CharField(max_length=16, blank=True)
    # When a create-draft POST went unanswered: Prolific may have made the draft, so the next
    # launch looks for it (by `draft_tag`) before asking for another.
    draft_lost_at = models.DateTimeField(null=True, blank=True)
    # Launches that went for the draft, each counted (and committed) before it waits for the row's
    # lock and so before any create-draft POST: a launch holding the lock that finds a count above
    # its own one knows another launch may have sent a POST whose answer was never recorded (a lost
    # answer, or a worker killed mid-request), and lists Prolific's studies for the draft first.
    draft_attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "Prolific studies"

    def __str__(self):
        return f"Prolific study {self.study_id or '(not created)'} of {self.survey}"


class ProlificSubmission(models.Model):
    """A participant's session as the entry page saw it, and as Prolific reported it.

    `session_id` and `participant_id` come from the study URL, which anyone can type, so the row
    counts for nothing until `confirmed`: a sync (or webhook) found Prolific listing a submission
    with this id, by this participant, in this study.
    """

    study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="submissions")
    session_id = models.CharField(max_length=64, unique=True, help_text="Prolific's submission id (SESSION_ID).")
    participant_id = models.CharField(max_length=64)
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="prolific_submissions")
    status = models.CharField(max_length=30, blank=True, help_text="Prolific's submission status as last seen.")
    study_code = models.CharField(
        max_length=64, blank=True, help_text="The completion code Prolific recorded for the submission, as last seen."
    )
    confirmed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    synced_at = models.DateTimeField(null=True, blank=True)
    # the client address the session entered from (none for sessions first seen in a sync): new
    # sessions are capped per address and hour, as on the survey's own link
    address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "participant_id"], name="prolificsubmission_one_per_participant")
        ]
        verbose_name = "Prolific submission"

    def __str__(self):
        return f"{self.session_id} ({self.status or 'unseen'})"


class ProlificBonus(models.Model):
    """One bonus, recorded before any money moves, so no retry can pay it twice.

    `key` makes the intent unique (a retried request finds the row). `bulk_id` is saved as soon as
    Prolific creates the bulk payment; `pay_sent_at` just before the pay call (not idempotent on
    Prolific's side); `paid_at` once Prolific accepted it. A row with `pay_sent_at` and no `paid_at`
    is never paid again automatically: sync compares it with the submission's `bonus_payments`.
    """

    submission = models.ForeignKey(ProlificSubmission, on_delete=models.PROTECT, related_name="bonuses")
    key = models.CharField(max_length=100, unique=True)
    amount_cents = models.PositiveIntegerField()
    reason = models.TextField(blank=True)
    bulk_id = models.CharField(max_length=64, blank=True)
    pay_sent_at = models.DateTimeField(null=True, blank=True)
    paid_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "Prolific bonuses"
        constraints = [models.CheckConstraint(condition=Q(amount_cents__gt=0), name="prolificbonus_positive")]

    def __str__(self):
        return f"{self.amount_cents}c to {self.submission}"


class ProlificWebhookEvent(models.Model):
    """A webhook delivery applied once: Prolific retries deliveries, and a repeat is ignored."""

    event_id = models.CharField(max_length=100, unique=True)
    event_type = models.CharField(max_length=60)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "Prolific webhook event"

    def __str__(self):
        return f"{self.event_type} {self.event_id}"


class ProlificBlockList(models.Model):
    """A researcher's block list, kept on Prolific as a participant group.

    Every later study of the researcher is created with a `participant_group_blocklist` filter on
    this group, so a blocked participant never sees those studies. Only the group's id is kept
    here: its members live on Prolific (adding one twice is ignored there).
    """

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="prolific_block_list")
    group_id = models.CharField(max_length=64, blank=True, help_text="Prolific's participant group id.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "Prolific block list"

    def __str__(self):
        return f"Prolific block list of {self.owner} ({self.group_id or 'not created'})"
