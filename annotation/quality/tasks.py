"""Celery tasks of quality control: take ids, call a service."""

from celery import shared_task

from annotation.models import Survey
from annotation.quality.recompute import quality_recompute


@shared_task(name="annotation.quality.recompute_quality")
def recompute_quality(survey_id):
    """Recompute a survey's quality report (queued, debounced, by `quality_mark_dirty`)."""
    survey = Survey.objects.filter(pk=survey_id).first()
    if survey is None:
        return None  # deleted since it was queued: nothing to do
    return quality_recompute(survey=survey).pk
