"""Celery task that renders a launched survey's HIT pages (see `task_page.stored.hit_pages_render`)."""

from celery import shared_task

from annotation.models import Survey
from annotation.views.task_page.stored import hit_pages_render


@shared_task(name="annotation.render_hit_pages")
def render_hit_pages(survey_id):
    """Store each HIT's rendered items; idempotent (a rerun renders only what is missing)."""
    return hit_pages_render(survey=Survey.objects.get(pk=survey_id))
