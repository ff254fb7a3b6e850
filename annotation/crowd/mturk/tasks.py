"""Celery tasks for MTurk: take ids, call the provider, retry only throttling and service faults.

Publishing is resumable by construction (each HIT is recorded as MTurk creates it and carries
a UniqueRequestToken), so a retry after HIT 37 of 50 failed publishes HITs 37-50 and nothing twice.
"""

from celery import shared_task

from annotation.crowd.mturk.errors import MTurkTransientError
from annotation.crowd.registry import get_provider
from annotation.models import Survey

RETRY = {
    "autoretry_for": (MTurkTransientError,),
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 6,
}


# Task names are those of their first home, annotation/tasks_mturk.py: queued messages and beat
# entries name them.
@shared_task(name="annotation.tasks_mturk.publish_survey_hits", **RETRY)
def publish_survey_hits(survey_id):
    survey = Survey.objects.get(pk=survey_id, provider=Survey.Provider.MTURK)
    return get_provider(survey).publish(survey=survey)


@shared_task(name="annotation.tasks_mturk.sync_survey", **RETRY)
def sync_survey(survey_id):
    survey = Survey.objects.get(pk=survey_id, provider=Survey.Provider.MTURK)
    return get_provider(survey).sync(survey=survey)


@shared_task(name="annotation.tasks_mturk.sync_live_surveys")
def sync_live_surveys():
    """Beat entry: queue a sync of every live MTurk survey that has published HITs."""
    survey_ids = (
        Survey.objects.filter(provider=Survey.Provider.MTURK, status=Survey.Status.LIVE, hits__mturk__isnull=False)
        .values_list("pk", flat=True)
        .distinct()
    )
    for survey_id in survey_ids:
        sync_survey.delay(survey_id)
    return len(survey_ids)
