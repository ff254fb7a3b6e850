"""Handing slots back to the pool: what the services and the crowd providers both need.

It reads and writes only models, so a provider (annotation/crowd/) can free a participant's slots
without importing the services, which import the providers.
"""

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import HIT, Assignment
from annotation.models.ratings import new_assignment_token


def assignments_expire(*, now=None, survey=None, annotator=None):
    """Return active assignments past their deadline to the pool. Returns how many were returned.

    Each returned slot gets a new token, so the old link cannot submit into someone else's work.
    """
    now = now or timezone.now()
    stale = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now)
    if survey is not None:
        stale = stale.filter(hit__survey=survey)
    if annotator is not None:
        stale = stale.filter(annotator=annotator)
    returned = 0
    for pk in stale.values_list("pk", flat=True):
        returned += Assignment.objects.filter(pk=pk, status=Assignment.Status.ACTIVE, expires_at__lte=now).update(
            status=Assignment.Status.OPEN,
            annotator=None,
            assigned_at=None,
            expires_at=None,
            token=new_assignment_token(),
        )
    return returned


@transaction.atomic
def rejected_slots_reopen(*, survey, annotator):
    """A new open slot on each HIT where `annotator`'s work was rejected and not yet replaced.

    For a platform that re-offers a rejected submission's place to another participant (Prolific):
    without a slot of its own that participant would find the study full. Each rejected slot is
    replaced once, however often the rejection is recorded again (the review page, a sync, a
    webhook, a retry). The HIT row is locked while its next slot number is taken, so two
    rejections on one HIT at once do not pick the same number. Returns how many slots were opened.
    """
    rejected = list(
        Assignment.objects.select_for_update()
        .filter(hit__survey=survey, annotator=annotator, status=Assignment.Status.REJECTED, replaced=False)
        .order_by("hit_id")
        .values_list("pk", "hit_id")
    )
    for pk, hit_id in rejected:
        HIT.objects.select_for_update().filter(pk=hit_id).first()
        last = Assignment.objects.filter(hit_id=hit_id).aggregate(top=Max("slot"))["top"]
        Assignment.objects.create(hit_id=hit_id, slot=last + 1)
        Assignment.objects.filter(pk=pk).update(replaced=True)
    return len(rejected)
