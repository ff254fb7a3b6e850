"""Sync half of the MTurk provider: MTurk's assignments into the app, and the confirmation rule.

A mixin of `MTurkProvider`; it talks to MTurk only through the provider's `_pages` and `_call`
(boto3 stays in mturk.py).

The task URL's ids prove nothing, so every slot opened from it is "unconfirmed" until MTurk itself
names the same assignment, HIT and worker: `ListAssignmentsForHIT` in sync, or `GetAssignment`
for one assignment before a review. MTurk returns only submitted, approved or rejected
assignments, so an assignment still being worked on is unknown to both; an unconfirmed slot is
therefore released only after its deadline (plus a grace period for the browser's hand-back),
when a genuine assignment must have reached MTurk.
"""

import datetime as dt
import logging

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.crowd.mturk.errors import MTurkRequestError
from annotation.models import Assignment, AttentionAnswer, Rating, ReviewAction, WrittenResponse
from annotation.models.mturk import MTurkAssignment, MTurkHIT, MTurkSettings
from annotation.models.ratings import new_assignment_token
from annotation.quality.services import quality_mark_dirty

logger = logging.getLogger(__name__)

ASSIGNMENT_STATUSES = ["Submitted", "Approved", "Rejected"]
# The statuses in which MTurk knows an assignment at all; each proves who did the work.
KNOWN_STATUSES = frozenset(ASSIGNMENT_STATUSES)
# After a slot's deadline, how long the worker's browser has to hand the assignment back to MTurk.
RELEASE_GRACE = dt.timedelta(minutes=10)
# MTurk's answers for an assignment id it does not know (or that is not this requester's).
UNKNOWN_CODES = frozenset({"RequestError", "ParameterValidationError"})


class MTurkSyncMixin:
    def sync(self, *, survey):
        """Record every assignment MTurk lists for the survey's HITs; confirm matching app slots."""
        mturk_settings = MTurkSettings.objects.filter(survey=survey).first()
        mturk_hits = list(MTurkHIT.objects.filter(hit__survey=survey).select_related("hit").order_by("hit__position"))
        summary = {"hits": len(mturk_hits), "reviewable": 0, "seen": 0, "created": 0, "updated": 0, "confirmed": 0}
        reviewable = set()
        if mturk_settings and mturk_settings.hit_type_id:
            for listed in self._pages(
                "list_reviewable_hits", "HITs", HITTypeId=mturk_settings.hit_type_id, Status="Reviewable"
            ):
                reviewable.add(listed["HITId"])
        for mturk_hit in mturk_hits:
            if mturk_hit.mturk_id in reviewable:
                summary["reviewable"] += 1
                if mturk_hit.status != "Reviewable":
                    mturk_hit.status = "Reviewable"
                    mturk_hit.save(update_fields=["status"])
            for listed in self._pages(
                "list_assignments_for_hit",
                "Assignments",
                HITId=mturk_hit.mturk_id,
                AssignmentStatuses=ASSIGNMENT_STATUSES,
            ):
                summary["seen"] += 1
                outcome, confirmed = self._record_assignment(mturk_hit, listed)
                summary[outcome] = summary.get(outcome, 0) + 1
                summary["confirmed"] += int(confirmed)
        summary["released"] = self.release_unknown(survey=survey)
        summary.pop("unchanged", None)
        MTurkSettings.objects.filter(survey=survey).update(last_synced_at=timezone.now())
        return summary

    @transaction.atomic
    def _record_assignment(self, mturk_hit, listed):
        """Upsert one listed assignment; returns ("created"|"updated"|"unchanged", confirmed)."""
        slot = (
            Assignment.objects.select_related("annotator")
            .filter(hit=mturk_hit.hit, external_id=listed["AssignmentId"])
            .first()
        )
        # The proof: MTurk's assignment id, worker id and HIT all match the app's slot.
        confirmed = bool(
            slot
            and slot.annotator
            and slot.annotator.provider == self.name
            and slot.annotator.worker_id == listed["WorkerId"]
            and listed["HITId"] == mturk_hit.mturk_id
            and listed["AssignmentStatus"] in KNOWN_STATUSES
        )
        values = {
            "mturk_hit": mturk_hit,
            "worker_id": listed["WorkerId"],
            "status": listed["AssignmentStatus"],
            "submitted_at": listed.get("SubmitTime"),
            "assignment": slot,
            "confirmed": confirmed,
        }
        record = MTurkAssignment.objects.filter(mturk_id=listed["AssignmentId"]).first()
        if record is None:
            MTurkAssignment.objects.create(mturk_id=listed["AssignmentId"], **values)
            outcome = "created"
        else:
            changed = [name for name, value in values.items() if getattr(record, name) != value]
            if changed:
                for name in changed:
                    setattr(record, name, values[name])
                record.save(update_fields=[*changed, "synced_at"])
            outcome = "updated" if changed else "unchanged"
        if slot is not None and confirmed:
            self._mirror_status(slot, listed["AssignmentStatus"])
        return outcome, confirmed

    def confirm_assignment(self, *, slot):
        """Ask MTurk about one slot's assignment (GetAssignment); returns its record, or None if unknown.

        The record is confirmed only when MTurk names this HIT and this worker; an assignment MTurk
        does not know (still in progress, or never issued) leaves the slot unconfirmed.
        """
        mturk_hit = MTurkHIT.objects.filter(hit_id=slot.hit_id).first()
        if mturk_hit is None or not slot.external_id:
            return None
        try:
            response = self._call("get_assignment", AssignmentId=slot.external_id)
        except MTurkRequestError as error:
            if error.code in UNKNOWN_CODES:
                return None
            raise
        listed = response["Assignment"]
        if listed.get("HITId") != mturk_hit.mturk_id or listed.get("AssignmentId") != slot.external_id:
            # MTurk knows the id, on another HIT: this slot's claim is false; record nothing under it.
            return None
        if response.get("HIT", {}).get("MaxAssignments") and not mturk_hit.max_assignments:
            MTurkHIT.objects.filter(pk=mturk_hit.pk).update(max_assignments=response["HIT"]["MaxAssignments"])
        self._record_assignment(mturk_hit, listed)
        return MTurkAssignment.objects.get(mturk_id=listed["AssignmentId"])

    def release_unknown(self, *, survey, now=None):
        """Free the survey's unconfirmed slots whose assignment MTurk does not know after the deadline.

        What was stored under such a slot came from a forged or abandoned task URL: its ratings,
        checks and written replies are deleted (logged with the ids) and the slot reopens with a
        new token, so forged work never holds a real worker's slot for longer than a deadline.
        """
        now = now or timezone.now()
        suspects = (
            Assignment.objects.filter(
                hit__survey=survey,
                status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED],
                expires_at__lte=now - RELEASE_GRACE,
            )
            .exclude(external_id="")
            .filter(Q(mturk__isnull=True) | Q(mturk__confirmed=False))
            .select_related("annotator")
        )
        released = 0
        for slot in list(suspects):
            record = self.confirm_assignment(slot=slot)
            if record is not None and record.confirmed:
                continue
            released += int(self._release(slot))
        if released:
            quality_mark_dirty(survey=survey)
        return released

    @staticmethod
    @transaction.atomic
    def _release(slot):
        locked = Assignment.objects.select_for_update().filter(pk=slot.pk, external_id=slot.external_id).first()
        if locked is None or locked.status not in (Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED):
            return False
        ratings = Rating.objects.filter(assignment=locked).delete()[0]
        AttentionAnswer.objects.filter(assignment=locked).delete()
        WrittenResponse.objects.filter(assignment=locked, status=WrittenResponse.Status.PENDING).delete()
        # Automatic decisions drawn from that work go with it; a researcher's own decisions stay.
        ReviewAction.objects.filter(assignment=locked, actor__isnull=True).delete()
        ReviewAction.objects.filter(assignment=locked).update(assignment=None)
        MTurkAssignment.objects.filter(assignment=locked).update(assignment=None, confirmed=False)
        logger.warning(
            "mturk released unconfirmed slot %s (assignment %s, %d ratings): MTurk does not know it",
            locked.pk,
            locked.external_id,
            ratings,
        )
        Assignment.objects.filter(pk=locked.pk).update(
            status=Assignment.Status.OPEN,
            annotator=None,
            external_id="",
            external_status="",
            assigned_at=None,
            expires_at=None,
            submitted_at=None,
            flagged=False,
            token=new_assignment_token(),
        )
        return True

    @staticmethod
    def _mirror_status(slot, mturk_status):
        """Reflect decisions made on MTurk (console or auto-approval) in the app's slot."""
        fields = []
        if slot.external_status != mturk_status:
            slot.external_status = mturk_status
            fields.append("external_status")
        target = {"Approved": Assignment.Status.APPROVED, "Rejected": Assignment.Status.REJECTED}.get(mturk_status)
        if target and slot.status != target:
            slot.status = target
            fields.append("status")
        if fields:
            slot.save(update_fields=fields)
