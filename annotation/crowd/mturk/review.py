"""Review half of the MTurk provider: approve, reject, bonus, block, expire, extend, notify.

A mixin of `MTurkProvider`; it talks to MTurk only through the provider's `_call` (boto3 stays in mturk.py).
Each action is idempotent: one the app already recorded is not sent again. Approve, reject and bonus
go only to assignments MTurk confirmed (sync's listing, or GetAssignment asked now): an assignment id
typed into a task URL never reaches MTurk's approve, reject or bonus calls.
"""

import datetime as dt

from django.db import transaction
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import pure
from annotation.crowd.mturk.errors import MTurkRequestError
from annotation.models import Assignment
from annotation.models.mturk import MTurkAssignment, MTurkBlock, MTurkBonus, MTurkHIT

# MTurk expires a HIT at once when its expiration is set to a time in the past.
EXPIRE_AT_ONCE = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)


class MTurkReviewMixin:
    def _record_for(self, assignment):
        if not assignment.external_id:
            raise ProviderError("This assignment has no MTurk assignment id.")
        return MTurkAssignment.objects.filter(mturk_id=assignment.external_id).first()

    def _confirmed_record(self, assignment):
        """The assignment's MTurk record once MTurk confirmed it; asks GetAssignment when sync has not."""
        record = self._record_for(assignment)
        if record is None or not record.confirmed or record.assignment_id != assignment.pk:
            record = self.confirm_assignment(slot=assignment)
        if record is None or not record.confirmed or record.assignment_id != assignment.pk:
            raise ProviderError(
                f"MTurk does not confirm assignment {assignment.external_id} for this HIT and worker "
                "(unconfirmed work); nothing was sent to MTurk."
            )
        return record

    def _decided(self, assignment, record, mturk_status, app_status):
        with transaction.atomic():
            if record is not None:
                MTurkAssignment.objects.filter(pk=record.pk).update(status=mturk_status)
            Assignment.objects.filter(pk=assignment.pk).update(status=app_status, external_status=mturk_status)
        assignment.status, assignment.external_status = app_status, mturk_status

    def _send_decision(self, operation, params, assignment, mturk_status):
        """Approve or reject on MTurk; a refusal for a decision MTurk already made counts as done.

        A decision whose answer was lost (or whose process died before recording it) is sent again
        by the next click, and MTurk refuses to decide an assignment that is no longer Submitted:
        MTurk's own status of the assignment (GetAssignment) decides."""
        try:
            self._call(operation, **params)
        except MTurkRequestError:
            try:
                listed = self._call("get_assignment", AssignmentId=assignment.external_id)["Assignment"]
            except ProviderError:
                listed = {}
            if listed.get("AssignmentStatus") != mturk_status:
                raise

    def approve(self, *, assignment, feedback=""):
        self._record_for(assignment)
        if assignment.external_status == "Approved":
            return False
        record = self._confirmed_record(assignment)
        params = {"AssignmentId": assignment.external_id}
        if feedback:
            params["RequesterFeedback"] = feedback[:1024]
        self._send_decision("approve_assignment", params, assignment, "Approved")
        self._decided(assignment, record, "Approved", Assignment.Status.APPROVED)
        return True

    def reject(self, *, assignment, reason):
        if not reason.strip():
            raise ProviderError("A rejection needs a reason; the worker sees it.")
        self._record_for(assignment)
        if assignment.external_status == "Rejected":
            return False
        record = self._confirmed_record(assignment)
        params = {"AssignmentId": assignment.external_id, "RequesterFeedback": reason[:1024]}
        self._send_decision("reject_assignment", params, assignment, "Rejected")
        self._decided(assignment, record, "Rejected", Assignment.Status.REJECTED)
        return True

    def bonus(self, *, assignment, amount_cents, reason, key=""):
        """Pay a bonus once per intent; False when this intent was paid already.

        `key` names the intent: a bonus form's page key, so the same form sent again (a double
        click, a retry, its reason edited) is the same bonus, paid with the first request's amount
        and reason, while a bonus from a freshly loaded page is a new one even with the same amount
        and reason. Without a key (the command line) the intent is the amount and reason.

        The UniqueRequestToken keeps MTurk from paying a repeat only for 24 hours, and MTurk answers
        a repeat with an error whose wording it does not document. So a bonus tried before (its row
        exists: an earlier request, or one running now) or refused is checked against MTurk's own
        list of the assignment's bonuses (ListBonusPayments) before anything is sent or reported.
        """
        if amount_cents <= 0 or not reason.strip():
            raise ProviderError("A bonus needs a positive amount and a reason.")
        # Pay only the worker MTurk itself named for this assignment.
        record = self._confirmed_record(assignment)
        intent = ("key", key) if key else (amount_cents, reason)
        token = pure.request_token("bonus", record.mturk_id, *intent)
        bonus, created = MTurkBonus.objects.get_or_create(
            request_token=token, defaults={"mturk_assignment": record, "amount_cents": amount_cents, "reason": reason}
        )
        if bonus.sent_at:
            return False
        if not created and self._bonus_listed(bonus):
            return self._bonus_sent(bonus, paid_now=False)
        try:
            self._call(
                "send_bonus",
                WorkerId=record.worker_id,
                BonusAmount=pure.dollars(bonus.amount_cents),
                AssignmentId=record.mturk_id,
                Reason=bonus.reason,
                UniqueRequestToken=token,
            )
        except MTurkRequestError:
            # Paid on an earlier try whose answer was lost (the token kept MTurk from paying twice):
            # MTurk lists it. Otherwise the refusal stands and nothing was paid.
            if not self._bonus_listed(bonus):
                raise
            return self._bonus_sent(bonus, paid_now=False)
        return self._bonus_sent(bonus, paid_now=True)

    def _bonus_listed(self, bonus):
        """Whether MTurk lists this bonus: more payments of its amount and reason on its assignment
        than the other bonuses of that amount and reason known to be sent (deliberate repeats)."""
        listed = self._pages("list_bonus_payments", "BonusPayments", AssignmentId=bonus.mturk_assignment.mturk_id)
        alike = sum(
            pure.cents_from_dollars(paid.get("BonusAmount") or "0") == bonus.amount_cents
            and paid.get("Reason", "") == bonus.reason
            for paid in listed
        )
        known = (
            MTurkBonus.objects.filter(
                mturk_assignment=bonus.mturk_assignment,
                amount_cents=bonus.amount_cents,
                reason=bonus.reason,
                sent_at__isnull=False,
            )
            .exclude(pk=bonus.pk)
            .count()
        )
        return alike > known

    @staticmethod
    def _bonus_sent(bonus, *, paid_now):
        MTurkBonus.objects.filter(pk=bonus.pk, sent_at__isnull=True).update(sent_at=timezone.now())
        return paid_now

    def block(self, *, annotator, reason, owner=None):
        # MTurk applies the exclusion qualification to every HIT of the account, whoever blocked.
        if annotator.provider != self.name:
            raise ProviderError("Only MTurk workers can be blocked on MTurk.")
        if MTurkBlock.objects.filter(annotator=annotator, sandbox=self.sandbox).exists():
            return False
        self._call(
            "associate_qualification_with_worker",
            QualificationTypeId=self.exclusion_qualification_id(),
            WorkerId=annotator.worker_id,
            IntegerValue=1,
            SendNotification=False,
        )
        MTurkBlock.objects.get_or_create(annotator=annotator, sandbox=self.sandbox, defaults={"reason": reason})
        return True

    def expire(self, *, survey):
        """Expire every published HIT now (HITs already expired here are skipped)."""
        now = timezone.now()
        expired = 0
        for mturk_hit in MTurkHIT.objects.filter(hit__survey=survey).order_by("hit__position"):
            if mturk_hit.expires_at and mturk_hit.expires_at <= now:
                continue
            self._call("update_expiration_for_hit", HITId=mturk_hit.mturk_id, ExpireAt=EXPIRE_AT_ONCE)
            MTurkHIT.objects.filter(pk=mturk_hit.pk).update(expires_at=now)
            expired += 1
        return {"expired": expired}

    def extend(self, *, survey, seconds):
        """Move every published HIT's expiration to `seconds` from now."""
        expire_at = timezone.now() + dt.timedelta(seconds=seconds)
        extended = 0
        for mturk_hit in MTurkHIT.objects.filter(hit__survey=survey).order_by("hit__position"):
            self._call("update_expiration_for_hit", HITId=mturk_hit.mturk_id, ExpireAt=expire_at)
            MTurkHIT.objects.filter(pk=mturk_hit.pk).update(expires_at=expire_at)
            extended += 1
        return {"extended": extended, "expires_at": expire_at}

    def notify(self, *, worker_ids, subject, message):
        """Message workers (MTurk takes 100 at a time); returns MTurk's failure statuses."""
        failures = []
        worker_ids = sorted(set(worker_ids))
        for start in range(0, len(worker_ids), 100):
            response = self._call(
                "notify_workers",
                Subject=subject[:200],
                MessageText=message[:4096],
                WorkerIds=worker_ids[start : start + 100],
            )
            failures.extend(response.get("NotifyWorkersFailureStatuses", []))
        return failures
