"""Celery tasks for Prolific: thin wrappers that take ids and call the provider.

Polling is the fallback to the webhook: beat syncs every live Prolific survey (config/celery.py).
"""

from celery import shared_task

from annotation.crowd.registry import get_provider
from annotation.models import Survey


# Task names are those of their first home, annotation/tasks_prolific.py: queued messages and beat
# entries name them.
@shared_task(name="annotation.tasks_prolific.prolific_sync_survey")
def prolific_sync_survey(survey_id):
    survey = Survey.objects.get(pk=survey_id, provider=Survey.Provider.PROLIFIC)
    return get_provider(survey).sync(survey=survey)


@shared_task(name="annotation.tasks_prolific.prolific_sync_live_surveys")
def prolific_sync_live_surveys():
    """Beat entry: queue a sync of every live or paused Prolific survey with a study on Prolific."""
    survey_ids = list(
        Survey.objects.filter(
            provider=Survey.Provider.PROLIFIC,
            status__in=(Survey.Status.LIVE, Survey.Status.PAUSED),
            prolific__study_id__gt="",
        ).values_list("pk", flat=True)
    )
    for survey_id in survey_ids:
        prolific_sync_survey.delay(survey_id)
    return len(survey_ids)
