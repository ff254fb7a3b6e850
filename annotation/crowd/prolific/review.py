"""Review half of the Prolific provider: approve, reject and pay a bonus, for confirmed work only.

A mixin of `ProlificProvider`; it talks to Prolific only through the provider's `client`. A decision
Prolific already made (an earlier try whose answer was lost) is read back and recorded rather than
reported as a refusal; bonuses are paid once by `prolific_bonus`.
"""

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.bonus import bonus_pay
from annotation.models import Assignment, ProlificSubmission
from annotation.services.slots import rejected_slots_reopen

MIN_REJECT_MESSAGE = 100
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)


def decision_record(submission, status, *, overrule=False):
    """Carry Prolific's decision on a submission over to the participant's finished work.

    REJECTED: the work is rejected (left out of every analysis) and, as Prolific re-offers the
    place to another participant, each rejected slot gets an open one on its HIT. APPROVED: work
    awaiting review is approved. `overrule` (a decision taken on RateLab's review page) also
    approves work the survey's attention policy rejected: the researcher looked at it. A decision
    read by a sync or a webhook does not: a submission Prolific approved by itself after its review
    period keeps failed-check work out of the analysis. Idempotent.
    """
    work = Assignment.objects.filter(hit__survey=submission.study.survey, annotator=submission.annotator)
    if status == "REJECTED":
        work.filter(status__in=Assignment.FINISHED).update(status=Assignment.Status.REJECTED)
        rejected_slots_reopen(survey=submission.study.survey, annotator=submission.annotator)
    elif status == "APPROVED":
        approvable = Assignment.FINISHED if overrule else (Assignment.Status.SUBMITTED,)
        work.filter(status__in=approvable, replaced=False).update(status=Assignment.Status.APPROVED)


class ProlificReviewMixin:
    def _confirmed_submission(self, assignment):
        row = (
            ProlificSubmission.objects.select_related("study__survey", "annotator")
            .filter(study__survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id)
            .first()
        )
        if row is None or not row.confirmed:
            raise ProviderError(
                "Prolific has not confirmed this participant's submission yet: sync the survey before reviewing it."
            )
        return row

    def _finish(self, row, status):
        ProlificSubmission.objects.filter(pk=row.pk).update(status=status)
        decision_record(row, status, overrule=True)

    def _decide(self, row, body, status):
        """Send a review decision; a repeat of one Prolific already carried out counts as done.

        A decision whose answer was lost (a timeout, a worker killed before the row was saved) is
        sent again by the next try, and Prolific refuses to move a submission to the status it
        already has: its own state of the submission decides, so the page does not report a
        refusal for a decision that was made."""
        try:
            self.client.transition_submission(row.session_id, body)
        except ProviderError as error:
            try:
                now = self.client.submission(row.session_id).get("status")
            except ProviderError:
                now = None
            if now != status:
                raise error

    def approve(self, *, assignment, feedback=""):
        row = self._confirmed_submission(assignment)
        if row.status != "APPROVED":
            self._decide(row, {"action": "APPROVE"}, "APPROVED")
        self._finish(row, "APPROVED")

    def reject(self, *, assignment, reason, category="LOW_EFFORT"):
        if category not in REJECTION_CATEGORIES:
            known = ", ".join(REJECTION_CATEGORIES)
            raise ProviderError(f"Unknown rejection category {category!r}: use one of {known}.")
        if len(reason.strip()) < MIN_REJECT_MESSAGE:
            raise ProviderError(
                f"Prolific needs a rejection message of at least {MIN_REJECT_MESSAGE} characters "
                f"(this one has {len(reason.strip())})."
            )
        row = self._confirmed_submission(assignment)
        if row.status != "REJECTED":
            self._decide(
                row, {"action": "REJECT", "message": reason.strip(), "rejection_category": category}, "REJECTED"
            )
        self._finish(row, "REJECTED")

    def bonus(self, *, assignment, amount_cents, reason, key):
        """Pay a bonus once per `key`, which names the researcher's intent (one bonus form, one
        command): a retried request, page or worker finds the row and does not pay again, while a
        deliberate second bonus of the same amount, asked for under a new key, is paid."""
        if amount_cents <= 0:
            raise ProviderError("A bonus must be more than 0.")
        if not key:
            raise ProviderError("A bonus needs the key of the form that asks for it: nothing was paid.")
        row = self._confirmed_submission(assignment)
        return bonus_pay(client=self.client, submission=row, amount_cents=amount_cents, reason=reason, key=key)
