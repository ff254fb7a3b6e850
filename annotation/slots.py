"""Handing slots back to the pool: what the services and the crowd providers both need.

It reads and writes only models, so a provider (annotation/crowd/) can free a participant's slots
without importing the services, which import the providers.
"""

from django.utils import timezone

from annotation.models import Assignment
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
