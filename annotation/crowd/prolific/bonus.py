"""Prolific bonuses, paid once: the two calls, and reading back the ones whose answer was lost.

Prolific pays a bonus in two calls: `POST submissions/bonus-payments/` sets it up (paying nothing)
and `POST bulk-bonus-payments/{id}/pay/` pays it, which is not idempotent. A `ProlificBonus` row
is written before any call, `pay_sent_at` just before the pay call, so a pay call is never sent
twice for one row. When its answer is lost, only Prolific's list of the submission's paid bonuses
(`bonus_payments`, in pence / cents) can say whether it was paid: it is read by the next try of
the same bonus and by every sync, and the researcher's page shows each bonus's state.
"""

import datetime

from django.db import transaction
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.api import PaymentOutcomeUnknown
from annotation.crowd.prolific.pay import money
from annotation.models import ProlificBonus

# Prolific makes bonus payments "in the following minutes"; a bonus it has not listed an hour after
# the pay call was sent was most likely never paid (the call never reached it, or the worker died
# between recording the call and sending it). RateLab still never sends it again on its own.
LISTING_GRACE = datetime.timedelta(hours=1)


def bonus_pay(*, client, submission, amount_cents, reason, key):
    """Pay `amount_cents` to a confirmed submission once per `key`; returns the bonus row.

    A repeat with the same key (a double click, a retried request or task) finds the row and pays
    nothing more. Raises ProviderError, with what happened, when the outcome is not yet known.
    """
    with transaction.atomic():
        bonus, _ = ProlificBonus.objects.select_for_update().get_or_create(
            key=key, defaults={"submission": submission, "amount_cents": amount_cents, "reason": reason}
        )
    if bonus.paid_at:
        return bonus
    if bonus.pay_sent_at:
        return bonus_reconcile(client=client, bonus=bonus)
    if not bonus.bulk_id:
        try:
            answer = client.create_bonus(
                study_id=submission.study.study_id, participant_id=submission.participant_id, amount_cents=amount_cents
            )
        except PaymentOutcomeUnknown:
            # Setting a bonus up pays nothing: a set-up whose answer was lost is never paid, and
            # the next try sets up (and pays) a fresh one.
            raise ProviderError(
                "Prolific did not answer when the bonus was being set up; nothing was paid. "
                "Send the same form again to set it up and pay it once."
            ) from None
        # The first set-up saved is the one paid: a concurrent request's set-up (a double click)
        # is left unpaid instead of overwriting the id, so the row always names what was paid.
        ProlificBonus.objects.filter(pk=bonus.pk, bulk_id="").update(bulk_id=answer["id"])
        bonus.refresh_from_db()
    # Recorded (and committed) before the call: if the answer is lost, no retry sends it again.
    claimed = ProlificBonus.objects.filter(pk=bonus.pk, pay_sent_at__isnull=True).update(pay_sent_at=timezone.now())
    bonus.refresh_from_db()
    if not claimed:
        return bonus  # a concurrent request sent it
    try:
        client.pay_bonus(bonus.bulk_id)
    except PaymentOutcomeUnknown:
        return bonus_reconcile(client=client, bonus=bonus)
    except ProviderError:
        # Prolific answered with a refusal: nothing was paid, so the intent may be sent again.
        ProlificBonus.objects.filter(pk=bonus.pk).update(pay_sent_at=None)
        raise
    ProlificBonus.objects.filter(pk=bonus.pk).update(paid_at=timezone.now())
    bonus.refresh_from_db()
    return bonus


def bonuses_reconcile(*, client, submission):
    """Mark paid the submission's sent bonuses that Prolific now lists; returns how many it marked.

    Prolific lists amounts, not bulk ids: a bonus is paid when Prolific lists more payments of its
    amount than RateLab knows to be paid, the oldest sent first. Never sends a pay call.
    """
    waiting = ProlificBonus.objects.filter(submission=submission, pay_sent_at__isnull=False, paid_at__isnull=True)
    if not waiting.exists():
        return 0
    listed = [round(float(value)) for value in client.submission(submission.session_id).get("bonus_payments") or []]
    marked, now = 0, timezone.now()
    with transaction.atomic():
        locked = ProlificBonus.objects.select_for_update().filter(submission=submission)
        rows = list(locked.order_by("pay_sent_at", "pk"))
        for amount in {row.amount_cents for row in rows}:
            same = [row for row in rows if row.amount_cents == amount]
            unaccounted = listed.count(amount) - sum(row.paid_at is not None for row in same)
            for row in same:
                if unaccounted <= 0:
                    break
                if row.pay_sent_at and not row.paid_at:
                    ProlificBonus.objects.filter(pk=row.pk).update(paid_at=now)
                    unaccounted -= 1
                    marked += 1
    return marked


def bonus_reconcile(*, client, bonus):
    """A sent bonus whose answer was lost: paid once Prolific lists it, else a ProviderError saying so."""
    bonuses_reconcile(client=client, submission=bonus.submission)
    bonus.refresh_from_db()
    if bonus.paid_at is None:
        raise ProviderError(
            bonus_state(bonus, currency=bonus.submission.study.currency)["text"] + " It will not be sent again."
        )
    return bonus


def study_bonuses_reconcile(*, client, study):
    """Sync's part: every submission of the study with a sent, unconfirmed bonus is read back."""
    marked = 0
    waiting = ProlificBonus.objects.filter(
        submission__study=study, pay_sent_at__isnull=False, paid_at__isnull=True
    ).select_related("submission")
    for submission in {bonus.submission for bonus in waiting}:
        try:
            marked += bonuses_reconcile(client=client, submission=submission)
        except ProviderError:
            continue  # Prolific did not answer for this one: the next sync asks again
    return marked


def bonus_state(bonus, *, currency="GBP", now=None):
    """What the researcher's page says about a bonus: {"state": short key, "text": a sentence}."""
    amount = money(bonus.amount_cents, currency)
    if bonus.paid_at:
        return {"state": "paid", "text": f"{amount} bonus paid."}
    if bonus.pay_sent_at:
        now = now or timezone.now()
        if now - bonus.pay_sent_at < LISTING_GRACE:
            return {
                "state": "waiting",
                "text": f"{amount} bonus sent; Prolific has not listed it yet (its payments take minutes).",
            }
        return {
            "state": "unlisted",
            "text": f"{amount} bonus sent {bonus.pay_sent_at:%Y-%m-%d %H:%M} UTC but still not listed by Prolific: "
            "it was probably not paid. Check the participant's bonuses on Prolific and, if it is missing, "
            "pay it again from a fresh page.",
        }
    return {"state": "unpaid", "text": f"{amount} bonus not paid (Prolific refused it or was not reached)."}
