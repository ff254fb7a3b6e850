"""Laying a survey out as HITs.

Which items a HIT holds is the survey's kind's (`annotation.kinds`): here the HITs are rebuilt
under a lock, refused once work has started, and given their assignment slots.
"""

from django.db import transaction

from annotation.kinds.base import HITLayoutError
from annotation.kinds.registry import kind_for
from annotation.models import HIT, Assignment, Context, Survey

__all__ = ["HITLayoutError", "hits_generate"]


@transaction.atomic
def hits_generate(*, survey):
    """(Re)build the survey's HITs and assignment slots. Refused once any slot has been taken."""
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if Assignment.objects.filter(hit__survey=survey).exclude(status=Assignment.Status.OPEN).exists():
        raise HITLayoutError("Annotators have started on this survey; its HITs can no longer be changed.")
    HIT.objects.filter(survey=survey).delete()
    contexts = list(Context.objects.filter(dataset=survey.dataset).values_list("pk", flat=True))
    hits = kind_for(survey).hits_layout(survey=survey, contexts=contexts)
    Assignment.objects.bulk_create(
        (Assignment(hit=hit, slot=slot) for hit in hits for slot in range(survey.assignments_per_hit)),
        batch_size=1000,
    )
    return hits
