"""Extending a running study: more assignments (ratings) per HIT, on the survey's crowd provider.

The analysis report's planning section says how many ratings per response a target precision
needs; the survey page offers that as one click. The app's own slots (Assignment rows) are added
here and the provider is told in the same transaction, so a provider's refusal adds nothing.
"""

from django.db import transaction
from django.db.models import Max

from annotation.crowd import get_provider
from annotation.crowd.base import ProviderError
from annotation.models import HIT, Assignment, Survey
from annotation.services.estimates import survey_estimate_for

MAX_EXTRA_PER_HIT = 20


def survey_extend(*, survey, per_hit, from_assignments):
    """Add `per_hit` assignment slots to every HIT of the survey.

    `from_assignments` is the assignments per HIT the researcher saw: a repeated click (or a retry)
    finds the survey already extended and changes nothing. Raises ProviderError with a message
    for the researcher when the request is out of range, the survey is closed or its provider
    cannot add work.

    Providers with `extends_hit_by_hit` (MTurk: one API call per HIT) are extended one HIT per
    transaction, so a HIT's local slots exist exactly when its provider accepted them; a failure
    half way keeps the HITs done, and the same click again finishes the rest.
    """
    with transaction.atomic():
        survey, provider, hits, target = _checked(survey=survey, per_hit=per_hit, from_assignments=from_assignments)
        if not getattr(provider, "extends_hit_by_hit", False):
            _add_slots(hits, survey.assignments_per_hit, target)
            Survey.objects.filter(pk=survey.pk).update(assignments_per_hit=target)
            survey.assignments_per_hit = target
            provider.add_assignments(survey=survey, per_hit=per_hit)
            return {"assignments_per_hit": target, "added": per_hit * len(hits)}
        provider.check_extension(survey=survey, target=target)
    added = sum(_extend_one_hit(survey=survey, provider=provider, hit_pk=hit, target=target) for hit in hits)
    Survey.objects.filter(pk=survey.pk, assignments_per_hit=from_assignments).update(assignments_per_hit=target)
    survey.assignments_per_hit = target
    return {"assignments_per_hit": target, "added": added}


def survey_extend_preview(*, survey, per_hit, from_assignments):
    """What `survey_extend` with these arguments would add, cost and take, for the page that asks
    the researcher to confirm it; it writes and sends nothing. Raises ProviderError as the extension
    itself would (out of range, already extended, closed), so the page refuses before anyone confirms."""
    with transaction.atomic():  # _checked locks the rows it reads; nothing is written
        survey, provider, hits, target = _checked(survey=survey, per_hit=per_hit, from_assignments=from_assignments)
    estimate = survey_estimate_for(survey=survey)
    added = per_hit * len(hits)
    return {
        "per_hit": per_hit,
        "hits": len(hits),
        "before": survey.assignments_per_hit,
        "after": target,
        "added": added,
        "answers_added": estimate["ratings"] // survey.assignments_per_hit * per_hit,
        "answers": estimate["answers"],
        "minutes_per_hit": estimate["minutes_per_hit"],
        "annotator_hours": round(added * estimate["minutes_per_hit"] / 60, 1),
        "cost": provider.extension_cost(survey=survey, per_hit=per_hit, n_hits=len(hits)),
    }


def _checked(*, survey, per_hit, from_assignments):
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if not 1 <= per_hit <= MAX_EXTRA_PER_HIT:
        raise ProviderError(f"Add between 1 and {MAX_EXTRA_PER_HIT} ratings per response, not {per_hit}.")
    if survey.assignments_per_hit != from_assignments:
        raise ProviderError(
            f"Survey {survey.name} already has {survey.assignments_per_hit} assignments per HIT "
            f"(the page showed {from_assignments}): nothing was added."
        )
    if survey.status == Survey.Status.CLOSED:
        raise ProviderError(f"Survey {survey.name} is closed: reopen it before adding work.")
    provider = get_provider(survey)
    if not provider.can_add_assignments:
        raise ProviderError(f"The {survey.provider} provider cannot add work to a study from RateLab.")
    # locked: a rejection recorded meanwhile (rejected_slots_reopen) numbers its new slot after these
    hits = list(HIT.objects.select_for_update().filter(survey=survey).order_by("position").values_list("pk", flat=True))
    if not hits:
        raise ProviderError(f"Survey {survey.name} has no HITs to extend.")
    target = survey.assignments_per_hit + per_hit
    if getattr(provider, "extends_hit_by_hit", False):
        # A HIT already above the survey's count means an extension stopped half way: only its own
        # target may finish it, or the HITs would end with different counts.
        top = provider.highest_capacity(survey=survey)
        if top > survey.assignments_per_hit and top != target:
            raise ProviderError(
                f"An earlier extension of survey {survey.name} to {top} assignments per HIT stopped half way: "
                f"add {top - survey.assignments_per_hit} per response to finish it first. Nothing was added."
            )
    return survey, provider, hits, target


def _add_slots(hits, start, target):
    """`target - start` new slots on each HIT, numbered after its last one: a HIT may already have
    more (a slot opened for a rejected one, or by the task page)."""
    last = dict(Assignment.objects.filter(hit_id__in=hits).values_list("hit_id").annotate(top=Max("slot")).order_by())
    Assignment.objects.bulk_create(
        (
            Assignment(hit_id=hit, slot=last.get(hit, -1) + 1 + offset)
            for hit in hits
            for offset in range(target - start)
        ),
        batch_size=1000,
    )


@transaction.atomic
def _extend_one_hit(*, survey, provider, hit_pk, target):
    """One HIT to `target` slots, all or nothing: the provider's call and the slots commit together."""
    hit = HIT.objects.select_for_update().get(pk=hit_pk)  # a concurrent click waits, then finds it done
    have = provider.hit_capacity(survey=survey, hit=hit)
    if have >= target:
        return 0
    try:
        provider.extend_hit(survey=survey, hit=hit, target=target)
    except ProviderError as error:
        raise ProviderError(
            f"Survey {survey.name}: HIT {hit.external_id or hit.position} was not extended, so it keeps {have} "
            f"assignments (HITs before it keep their new assignments; the same button finishes the rest). {error}"
        ) from error
    _add_slots([hit.pk], have, target)
    return target - have
