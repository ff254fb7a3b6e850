"""Writes for quality control: automatic decisions, researcher overrides, the cached report."""

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotation.models import ExclusionDecision
from annotation.quality.recompute import quality_recompute
from annotation.quality.selectors import recompute_key
from annotation.quality.tasks import recompute_quality

# Ratings arrive in bursts (a HIT submits several at once, many annotators work together):
# recompute at most once per survey in this many seconds (setting QUALITY_DEBOUNCE_SECONDS).
DEFAULT_DEBOUNCE_SECONDS = 30


def _debounce_seconds():
    return getattr(settings, "QUALITY_DEBOUNCE_SECONDS", DEFAULT_DEBOUNCE_SECONDS)


class QualityError(ValueError):
    """A quality-control request that cannot be carried out (message says why)."""


def quality_mark_dirty(*, survey):
    """Say that the survey's ratings changed: queue a recompute of its quality report.

    Call it from any write that adds ratings, attention answers or assignment reviews (the
    submit path, rating imports). At most one recompute is queued per survey per
    QUALITY_DEBOUNCE_SECONDS (30); it runs after the caller's transaction commits, with a
    countdown so that a burst of submissions is computed once.

    Without a broker (eager Celery) nothing is queued: an eager task would run inside the
    submitting request. The report is then recomputed when it is next read (a page visit,
    `accepted_ratings`, the report command), which notices it is stale by its fingerprint.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    quality_queue_recompute(survey=survey)


def quality_queue_recompute(*, survey):
    """Queue a recompute (debounced as above) also with eager Celery: the pages call this."""
    seconds = _debounce_seconds()
    # The key holds the time it was queued: the quality pages show it while the recompute is pending.
    if cache.add(recompute_key(survey.pk), timezone.now(), timeout=seconds):
        survey_id = survey.pk
        transaction.on_commit(lambda: recompute_quality.apply_async((survey_id,), countdown=seconds))


def _annotator_in_survey(survey, annotator):
    rated = (
        annotator.ratings.filter(survey=survey).exists() or annotator.pairwise_judgements.filter(survey=survey).exists()
    )
    answered = annotator.assignments.filter(hit__survey=survey).exists()
    if not (rated or answered):
        raise QualityError(f"annotator {annotator.worker_id} did no work in survey {survey.name}")


@transaction.atomic
def exclusion_override(*, survey, annotator, excluded, note, user):
    """A researcher's decision to exclude or accept an annotator, whatever the rules say."""
    note = (note or "").strip()
    if not note:
        raise QualityError("an override needs a reason")
    _annotator_in_survey(survey, annotator)
    decision = ExclusionDecision.objects.create(
        survey=survey,
        annotator=annotator,
        excluded=bool(excluded),
        reasons=[{"rule": "manual", "detail": note}],
        source=ExclusionDecision.Source.MANUAL,
        decided_by=user,
        note=note,
    )
    quality_mark_dirty(survey=survey)
    return decision


@transaction.atomic
def exclusion_reset(*, survey, annotator, note, user):
    """Drop a researcher's override: the automatic rule decides again."""
    note = (note or "").strip()
    if not note:
        raise QualityError("going back to the automatic rule needs a reason")
    _annotator_in_survey(survey, annotator)
    latest_auto = (
        ExclusionDecision.objects.filter(survey=survey, annotator=annotator, source=ExclusionDecision.Source.AUTO)
        .order_by("created_at", "id")
        .last()
    )
    decision = ExclusionDecision.objects.create(
        survey=survey,
        annotator=annotator,
        excluded=bool(latest_auto and latest_auto.excluded),
        reasons=latest_auto.reasons if latest_auto else [],
        source=ExclusionDecision.Source.RESET,
        decided_by=user,
        note=note,
    )
    quality_mark_dirty(survey=survey)
    return decision


__all__ = [
    "QualityError",
    "exclusion_override",
    "exclusion_reset",
    "quality_mark_dirty",
    "quality_queue_recompute",
    "quality_recompute",
]
