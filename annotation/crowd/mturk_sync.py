"""Sync half of the MTurk provider: MTurk's assignments into the app, and the confirmation rule.

A mixin of `MTurkProvider`; it talks to MTurk only through the provider's `_pages` (boto3 stays in mturk.py).
"""

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment
from annotation.models.mturk import MTurkAssignment, MTurkHIT, MTurkSettings

ASSIGNMENT_STATUSES = ["Submitted", "Approved", "Rejected"]


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
