"""MTurk writes: the task page's assignment slots and answers, and the researcher's actions.

On MTurk the crowd, not the app, chooses the HIT, so `mturk_assignment_open` takes the slot for
MTurk's assignment id; answers are then stored by the shared `assignment_submit`.
"""

import datetime as dt
import logging

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import MTurkProvider, settings_for
from annotation.crowd.registry import get_provider
from annotation.models import HIT, Annotator, Aspect, Assignment, Survey
from annotation.models.mturk import MTurkAssignment, MTurkHIT
from annotation.tasks_mturk import publish_survey_hits, sync_survey

logger = logging.getLogger(__name__)

PROVIDER = MTurkProvider.name
DEFAULT_ASPECT = {"key": Aspect.OVERALL, "values": [1, 2, 3, 4, 5]}


class TaskRefused(Exception):
    """The task page cannot accept this request; the message is shown to the worker."""


# --- settings -------------------------------------------------------------------------
def mturk_settings_ensure(*, survey):
    if survey.provider != Survey.Provider.MTURK:
        raise ProviderError("This survey does not use Mechanical Turk.")
    return settings_for(survey)


def mturk_settings_update(*, survey, live=None, **fields):
    """Change a survey's MTurk settings; the endpoint is fixed once a HIT is published."""
    row = mturk_settings_ensure(survey=survey)
    if live is not None and row.sandbox == live:
        if MTurkHIT.objects.filter(hit__survey=survey).exists():
            raise ProviderError("HITs are already published on the other endpoint; make a new survey instead.")
        row.sandbox = not live
    for name, value in fields.items():
        setattr(row, name, value)
    row.full_clean()
    row.save()
    return row


# --- the worker's side ----------------------------------------------------------------
@transaction.atomic
def mturk_assignment_open(*, hit, assignment_id, worker_id):
    """The app's slot for an MTurk assignment, taken (or re-found) for this worker.

    MTurk decides who may work (qualifications, MaxAssignments); the app keeps one slot per
    assignment id. The worker id here comes from the URL and proves nothing until sync confirms it.
    """
    if hit.survey.status == Survey.Status.CLOSED:
        raise TaskRefused("This study is closed.")
    annotator, _ = Annotator.objects.get_or_create(provider=PROVIDER, worker_id=worker_id)
    slots = Assignment.objects.select_for_update().filter(hit=hit)
    existing = slots.filter(external_id=assignment_id).first()
    if existing is not None:
        if existing.annotator_id != annotator.pk:
            raise TaskRefused("This assignment belongs to another worker.")
        return existing
    slot = slots.filter(annotator=annotator).first()
    if slot is not None and slot.status != Assignment.Status.ACTIVE:
        raise TaskRefused("You have already completed this HIT.")
    if slot is None:
        slot = slots.filter(status=Assignment.Status.OPEN).order_by("slot").first()
    if slot is None:
        # MTurk, not the app, limits assignments per HIT: add a slot when the generated ones are taken.
        last = Assignment.objects.filter(hit=hit).aggregate(last=Max("slot"))["last"]
        slot = Assignment(hit=hit, slot=0 if last is None else last + 1)
    now = timezone.now()
    slot.annotator = annotator
    slot.status = Assignment.Status.ACTIVE
    slot.external_id = assignment_id
    slot.assigned_at = now
    slot.expires_at = now + dt.timedelta(minutes=hit.survey.assignment_minutes)
    slot.save()
    return slot


# --- the researcher's side ------------------------------------------------------------
def mturk_publish(*, survey):
    """Queue publishing the survey's unpublished HITs (after the current transaction commits)."""
    mturk_settings_ensure(survey=survey)
    transaction.on_commit(lambda: publish_survey_hits.delay(survey.pk))


def mturk_sync(*, survey):
    mturk_settings_ensure(survey=survey)
    transaction.on_commit(lambda: sync_survey.delay(survey.pk))


def mturk_cost_estimate(*, survey):
    return get_provider(survey).cost_estimate(survey=survey)


def mturk_balance_cents(*, survey):
    return get_provider(survey).balance_cents()


def mturk_approve(*, assignment, feedback=""):
    return get_provider(assignment.hit.survey).approve(assignment=assignment, feedback=feedback)


def mturk_reject(*, assignment, reason):
    return get_provider(assignment.hit.survey).reject(assignment=assignment, reason=reason)


def mturk_bonus(*, assignment, amount_cents, reason):
    return get_provider(assignment.hit.survey).bonus(assignment=assignment, amount_cents=amount_cents, reason=reason)


def mturk_block(*, survey, annotator, reason):
    return get_provider(survey).block(annotator=annotator, reason=reason)


def mturk_expire(*, survey):
    return get_provider(survey).expire(survey=survey)


def mturk_extend(*, survey, hours):
    return get_provider(survey).extend(survey=survey, seconds=int(hours * 3600))


def mturk_notify(*, survey, subject, message):
    """Message every worker MTurk confirmed on this survey."""
    workers = MTurkAssignment.objects.filter(mturk_hit__hit__survey=survey, confirmed=True).values_list(
        "worker_id", flat=True
    )
    return get_provider(survey).notify(worker_ids=list(workers), subject=subject, message=message)


ATTENTION_REJECT_REASON = (
    "Your work failed the attention checks (items that asked for a specific answer), so it cannot be accepted."
)


def mturk_apply_attention_policy(*, survey, approve_rest=False):
    """Decide submitted, MTurk-confirmed work by the survey's attention policy.

    With the `reject` policy, flagged assignments (a failed check) are rejected with a reason the
    worker sees; with `approve_rest`, every other submitted assignment is approved. Decisions
    already made are skipped, so running it twice changes nothing.
    """
    provider = get_provider(survey)
    slots = Assignment.objects.filter(
        hit__survey=survey, status=Assignment.Status.SUBMITTED, mturk__confirmed=True, mturk__status="Submitted"
    ).order_by("hit__position", "slot")
    counts = {"rejected": 0, "approved": 0}
    for slot in slots:
        if slot.flagged and survey.attention_policy == Survey.AttentionPolicy.REJECT:
            counts["rejected"] += int(provider.reject(assignment=slot, reason=ATTENTION_REJECT_REASON))
        elif approve_rest and not slot.flagged:
            counts["approved"] += int(provider.approve(assignment=slot))
    return counts


def mturk_find_assignment(*, survey, assignment_id):
    """The app's slot for an MTurk assignment id of this survey (for commands and pages)."""
    slot = Assignment.objects.select_related("hit__survey", "annotator").filter(
        hit__survey=survey, external_id=assignment_id
    )
    found = slot.first()
    if found is None:
        raise ProviderError(f"No assignment {assignment_id!r} in survey {survey.name!r}.")
    return found


def mturk_hits(*, survey):
    return HIT.objects.filter(survey=survey).select_related("mturk").order_by("position")
