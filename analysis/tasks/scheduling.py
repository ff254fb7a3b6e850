"""When to (re)compute a cached report, without doing heavy work in the request.

A page view only reads the cached Report. For a study of up to ANALYSIS_PAGE_CHECK_MAX_RATINGS
ratings it compares a change marker of the inputs (newest rating, exclusion decision, rejected
assignment; metric scores: a few aggregate queries) with the report's on every view, so a change
(an exclusion override) shows at once as "recomputing"; besides, and for larger studies, it
queues the full fingerprint comparison as a task at most every ANALYSIS_CHECK_SECONDS. A stale
or missing report queues its computation with `transaction.on_commit`; how the task runs
without a broker is config/celery.py's business.
Beside the tasks it queues, above the services they call.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from analysis.models import Report
from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create
from analysis.services.freshness import fingerprint_of, report_change_marker, report_input_parts
from analysis.tasks.report import report_check_task, report_refresh_task

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


def report_request(*, report, force=False):
    """Queue a recomputation unless one is already queued. Returns True if it queued one.

    `force` (the Refresh button) queues again after a failure, or when the queued one is lost.
    """
    now = timezone.now()
    recent = report.requested_at is not None and now - report.requested_at < REQUEUE_AFTER
    if recent and report_pending(report):
        return False
    if recent and report.status == Report.Status.FAILED and not force:
        return False
    Report.objects.filter(pk=report.pk).update(requested_at=now)
    report.requested_at = now
    transaction.on_commit(lambda: _queue(report_refresh_task, report.pk))
    return True


def _page_check_limit():
    return int(getattr(settings, "ANALYSIS_PAGE_CHECK_MAX_RATINGS", 10_000))


def report_inputs_now(report):
    """The current short hashes of the report's inputs (see services.freshness.report_input_parts)."""
    return report_input_parts(dataset=report.dataset, survey=report.survey, **report.params)


def report_is_stale(report, parts=None):
    """True when the inputs changed since the report was computed (computes the fingerprint now)."""
    if report.data is None:
        return True
    parts = parts or report_inputs_now(report)
    return fingerprint_of(parts) != report.fingerprint


def report_marker_changed(report):
    """The page's cheap check: has the change marker moved since the report was computed?"""
    stored = (report.data or {}).get("inputs_marker")
    current = report_change_marker(dataset=report.dataset, survey=report.survey, **report.params)
    return stored is None or stored != current


def report_refresh_request(*, report):
    """The Refresh button: "up to date" (nothing queued), "running" (already queued) or "queued"."""
    if report.data is not None and report.status == Report.Status.READY and not report_is_stale(report):
        Report.objects.filter(pk=report.pk).update(checked_at=timezone.now())
        return "up to date"
    return "queued" if report_request(report=report, force=True) else "running"


def report_current(
    *, dataset, survey=None, aspect="overall", systems=None, apply_exclusions=True, learned_metric=None, options=None
):
    """The cached report for these filters, queueing its computation or a staleness check.

    Returns the Report (without its large `vectors`), possibly with no data yet.
    """
    params = report_params(
        aspect=aspect, systems=systems, apply_exclusions=apply_exclusions, learned_metric=learned_metric,
        options=options,
    )  # fmt: skip
    report = report_get_or_create(dataset=dataset, survey=survey, params=params)
    now = timezone.now()
    small = report.data is not None and (
        (report.data.get("filters") or {}).get("n_ratings_before_exclusions", 0) <= _page_check_limit()
    )
    if report.data is None or (small and not report_pending(report) and report_marker_changed(report)):
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
