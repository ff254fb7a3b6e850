"""A Prolific submission as RateLab records it: its status, the place it holds, the code it earns.

What a sync, a signed webhook and the participant's pages all read or write about one submission;
the provider (provider.py) and the participant views (views/crowd/prolific_entry.py) share it.
"""

import datetime

from django.db import transaction
from django.utils import timezone

from annotation.crowd.prolific.review import decision_record
from annotation.models import Assignment, ProlificSubmission
from annotation.services.slots import assignments_expire

COMPLETE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
# Prolific's statuses after which the participant no longer holds the study place.
PLACE_FREED = {"RETURNED", "TIMED-OUT", "REJECTED"}
FINISHED_STATUSES = {"AWAITING REVIEW", "APPROVED", "REJECTED"}


def completion_code(study, annotator):
    """COMPLETED, or FAILED_ATTENTION_CHECK when the survey rejects failed checks and they failed one."""
    survey = study.survey
    if survey.attention_policy == survey.AttentionPolicy.REJECT:
        failed = Assignment.objects.filter(
            hit__survey=survey, annotator=annotator, attention_answers__passed=False
        ).exists()
        if failed:
            return study.failed_check_code
    return study.completed_code


def measured_median_seconds(listed):
    """The median `time_taken` (seconds) of the finished submissions Prolific listed; None if none."""
    times = sorted(
        int(item["time_taken"])
        for item in listed
        if item.get("status") in FINISHED_STATUSES and isinstance(item.get("time_taken"), (int, float))
    )
    if not times:
        return None
    middle = len(times) // 2
    return times[middle] if len(times) % 2 else round((times[middle - 1] + times[middle]) / 2)


def free_places(submission):
    """The participant's open tasks go back to the pool (they returned or timed out on Prolific)."""
    far = timezone.now() + datetime.timedelta(days=3650)
    return assignments_expire(now=far, survey=submission.study.survey, annotator=submission.annotator)


def apply_submission_status(submission, *, status, participant_id, study_id, code=""):
    """Record what Prolific says about a submission (and the completion code its list names; a
    webhook names none); idempotent. Returns the row as saved."""
    matches = participant_id == submission.participant_id and study_id == submission.study.study_id
    fields = {"status": status, "synced_at": timezone.now()}
    if code:
        fields["study_code"] = code
    if matches:
        fields["confirmed"] = True
    with transaction.atomic():
        ProlificSubmission.objects.filter(pk=submission.pk).update(**fields)
        if status in PLACE_FREED:
            free_places(submission)
        submission.refresh_from_db()
        if submission.confirmed:
            # A decision made in Prolific's own app (or by its automatic approval) counts here too.
            decision_record(submission, status)
    return submission
