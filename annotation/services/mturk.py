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
from annotation.crowd.mturk import pure
from annotation.crowd.mturk.provider import MTurkProvider, settings_for
from annotation.crowd.mturk.tasks import publish_survey_hits, sync_survey
from annotation.crowd.registry import get_provider
from annotation.models import HIT, Annotator, Aspect, Assignment, Survey
from annotation.models.mturk import MTurkAssignment, MTurkHIT
from annotation.models.ratings import new_assignment_token

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
def mturk_assignment_open(*, hit, assignment_id, worker_id, now=None):
    """The app's slot for an MTurk assignment, taken (or re-found) for this worker.

    Nothing here is proof: the ids come from the URL, and sync (or GetAssignment before a review)
    confirms them with MTurk later. So a request can never take more than MTurk could have given:
    ids must have MTurk's shape, a slot keeps the assignment id it was opened with, one worker holds
    one slot per HIT, and the HIT never holds more slots than its MaxAssignments.
    """
    problem = pure.task_params_problem(assignment_id=assignment_id, hit_id=hit.external_id, worker_id=worker_id)
    if problem:
        raise TaskRefused(problem)
    if hit.survey.status == Survey.Status.CLOSED:
        raise TaskRefused("This study is closed.")
    now = now or timezone.now()
    # One decision at a time per HIT: the lock on the HIT row serialises concurrent first visits.
    # (`of=self`: PostgreSQL locks no row on the nullable side of the outer joins.)
    hit = HIT.objects.select_for_update(of=("self",)).select_related("survey", "mturk").get(pk=hit.pk)
    slots = Assignment.objects.select_for_update(of=("self",)).filter(hit=hit)
    existing = slots.select_related("annotator").filter(external_id=assignment_id).first()
    if existing is not None:
        owner = existing.annotator
        if owner is None or owner.provider != PROVIDER or owner.worker_id != worker_id:
            raise TaskRefused("This assignment belongs to another worker.")
        return existing
    # A slot past its deadline goes back to the pool first (MTurk's own deadline has passed too).
    # Only this HIT's rows, which this transaction holds: touching other HITs could deadlock.
    for stale in slots.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now).values_list("pk", flat=True):
        Assignment.objects.filter(pk=stale).update(
            status=Assignment.Status.OPEN,
            annotator=None,
            assigned_at=None,
            expires_at=None,
            external_id="",
            external_status="",
            token=new_assignment_token(),
        )
    annotator = Annotator.objects.filter(provider=PROVIDER, worker_id=worker_id).first()
    own = slots.filter(annotator=annotator).first() if annotator else None
    if own is not None:
        if own.status != Assignment.Status.ACTIVE:
            raise TaskRefused("You have already completed this HIT.")
        # Never re-point a worker's slot: MTurk gives a worker one assignment per HIT at a time.
        raise TaskRefused("You already have another assignment of this HIT open; nothing was changed.")
    # MTurk issues at most MaxAssignments assignments per HIT, so no more slots are ever in use.
    limit = hit.mturk.slot_limit if hasattr(hit, "mturk") else hit.survey.assignments_per_hit
    if slots.exclude(status=Assignment.Status.OPEN).count() >= limit:
        raise TaskRefused("Every assignment of this HIT is taken; please try again later.")
    slot = slots.filter(status=Assignment.Status.OPEN).order_by("slot").first()
    if slot is None:
        last = slots.aggregate(last=Max("slot"))["last"]
        slot = Assignment(hit=hit, slot=0 if last is None else last + 1)
    annotator = annotator or Annotator.objects.get_or_create(provider=PROVIDER, worker_id=worker_id)[0]
    slot.annotator = annotator
    slot.status = Assignment.Status.ACTIVE
    slot.external_id = assignment_id
    slot.external_status = ""
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


def mturk_bonus(*, assignment, amount_cents, reason, key=""):
    return get_provider(assignment.hit.survey).bonus(
        assignment=assignment, amount_cents=amount_cents, reason=reason, key=key
    )


class WorkerNotBlockable(ProviderError):
    """The worker cannot be blocked from this survey; the message never says whether the id exists."""


def mturk_block(*, survey, worker_id, reason):
    """Block a worker MTurk itself listed on one of this survey owner's HITs.

    The exclusion qualification is shared by every survey of the endpoint, so a researcher may
    block only workers who did work on their own surveys; the proof is MTurk's listing (sync or
    GetAssignment), never a worker id typed into a task URL. An unknown id and another
    researcher's worker get the same answer, so the refusal reveals nothing.
    """
    worked_here = MTurkAssignment.objects.filter(
        worker_id=worker_id,
        mturk_hit__hit__survey__owner_id=survey.owner_id,
        mturk_hit__hit__survey__owner__isnull=False,
    )
    if not worker_id or not worked_here.exists():
        raise WorkerNotBlockable(
            "Only workers MTurk lists on your own surveys can be blocked; this worker id is not one of them "
            "(if they just submitted, sync first)."
        )
    annotator = Annotator.objects.get_or_create(provider=PROVIDER, worker_id=worker_id)[0]
    return get_provider(survey).block(annotator=annotator, reason=reason)


def mturk_expire(*, survey):
    return get_provider(survey).expire(survey=survey)


MAX_EXTEND_HOURS = 365 * 24  # MTurk keeps a HIT available for a year at most


def mturk_extend(*, survey, hours):
    """Move every published HIT's expiry to `hours` from now. Zero or fewer hours would expire the
    HITs (an irreversible action that asks first, under its own button), and past a year MTurk
    refuses and the date arithmetic fails; both are refused in words."""
    if not 0 < hours <= MAX_EXTEND_HOURS:
        raise ProviderError(f"Hours to extend by must be more than 0 and at most {MAX_EXTEND_HOURS} (a year).")
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
