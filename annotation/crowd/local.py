"""The built-in crowd: annotators arrive through the survey's shareable link.

There is no outside party to publish to or pay, so the methods only record decisions in the app's
own tables. Claims and submissions go through annotation.services like every provider's.
"""

from django.db.models import Count

from annotation.crowd.base import CrowdProvider
from annotation.crowd.blocks import block_for_owner
from annotation.models import Assignment, ReviewAction


class LocalProvider(CrowdProvider):
    name = "local"

    @classmethod
    def for_survey(cls, survey):
        # Stateless: one provider serves every local survey.
        return cls()

    can_add_assignments = True

    def add_assignments(self, *, survey, per_hit):
        # The new open slots are the whole extension: the survey's link hands them out.
        return {"added_per_hit": per_hit}

    def extension_cost(self, *, survey, per_hit, n_hits):
        return {
            "total": "none ($0.00)",
            "lines": ["The built-in crowd is paid nothing through RateLab: the survey's link hands out the new work."],
        }

    def publish(self, *, survey):
        # The link works as soon as the survey is live; nothing to send anywhere.
        return {"open_slots": Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.OPEN).count()}

    def sync(self, *, survey):
        counts = dict(
            Assignment.objects.filter(hit__survey=survey)
            .values_list("status")
            .annotate(n=Count("pk"))
            .values_list("status", "n")
        )
        return {status: counts.get(status, 0) for status in Assignment.Status.values}

    def approve(self, *, assignment, feedback=""):
        Assignment.objects.filter(pk=assignment.pk, status__in=Assignment.FINISHED).update(
            status=Assignment.Status.APPROVED
        )

    def reject(self, *, assignment, reason):
        Assignment.objects.filter(pk=assignment.pk, status__in=Assignment.FINISHED).update(
            status=Assignment.Status.REJECTED
        )

    def bonus(self, *, assignment, amount_cents, reason):
        # Local annotators are paid outside the app; the bonus is recorded so the researcher can.
        return ReviewAction.objects.get_or_create(
            survey=assignment.hit.survey,
            annotator_id=assignment.annotator_id,
            assignment=assignment,
            action=ReviewAction.Action.BONUS,
            amount_cents=amount_cents,
            defaults={"reason": reason},
        )[0]

    def block(self, *, annotator, reason, owner=None):
        # assignment_claim refuses annotators with a block row of the survey's owner.
        return block_for_owner(annotator=annotator, owner=owner, reason=reason)

    def expire(self, *, survey):
        # Closing the survey already stops claims (assignment_claim checks the status).
        return {"open_slots": 0}
