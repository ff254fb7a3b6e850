"""When to (re)compute a cached report, without doing heavy work in the request.

A page view only reads the cached Report. At most every ANALYSIS_CHECK_SECONDS it queues a
task that compares the inputs' fingerprint (ratings, exclusions, metric scores) with the
report's and recomputes on a change; a missing report queues its first computation. With an
eager Celery (no broker: small installations, tests) the task runs in-process.
Separate from services.py because it imports the tasks module, which imports the services.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analysis.models import Report
from analysis.services import report_get_or_create, report_params
from analysis.tasks import report_check_task, report_refresh_task

logger = logging.getLogger(__name__)

# A queued computation that has not finished after this long is queued again (lost worker).
REQUEUE_AFTER = timedelta(minutes=15)


def _check_interval():
    return timedelta(seconds=int(getattr(settings, "ANALYSIS_CHECK_SECONDS", 30)))


def _queue(task, report_id):
    """Send a task; with eager Celery a failure (already recorded on the Report) must not turn
    the researcher's page into a server error, so it is logged instead."""
    try:
        task.delay(report_id)
    except Exception:
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            raise
        logger.exception("report %s: computation failed", report_id)


def report_pending(report):
    """True while a computation is queued or running."""
    if report.status == report.Status.FAILED:
        return False
    return report.requested_at is not None and (report.computed_at is None or report.requested_at > report.computed_at)


def report_request(*, report):
    """Queue a recomputation unless one is already queued. Returns True if it queued one."""
    now = timezone.now()
    recent = report.requested_at is not None and now - report.requested_at < REQUEUE_AFTER
    if recent and (report_pending(report) or report.status == Report.Status.FAILED):
        return False
    Report.objects.filter(pk=report.pk).update(requested_at=now)
    transaction.on_commit(lambda: _queue(report_refresh_task, report.pk))
    return True


def report_current(*, dataset, survey=None, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None):
    """The cached report for these filters, queueing its computation or a staleness check.

    Returns the Report (without its large `vectors`), possibly with no data yet.
    """
    params = report_params(
        aspect=aspect, systems=systems, apply_exclusions=apply_exclusions, learned_metric=learned_metric
    )
    report = report_get_or_create(dataset=dataset, survey=survey, params=params)
    now = timezone.now()
    if report.data is None:
        queued = report_request(report=report)
    elif report.checked_at is None or now - report.checked_at >= _check_interval():
        Report.objects.filter(pk=report.pk).update(checked_at=now)
        transaction.on_commit(lambda: _queue(report_check_task, report.pk))
        queued = True
    else:
        return report
    if queued and settings.CELERY_TASK_ALWAYS_EAGER and not transaction.get_connection().in_atomic_block:
        # The eager task has just run: show its result.
        report = Report.objects.defer("vectors").get(pk=report.pk)
    return report
