"""Celery tasks of a report's computation: thin wrappers that load a row and call a service.

A report's computation is idempotent (it replaces the cached figures whole), so it is
acknowledged late and re-queued when its worker dies; `liveness` counts its starts and a
heartbeat thread shows the watchdog (analysis/tasks/recovery.py) that it is alive.
"""

from celery import shared_task

from analysis.models import Report
from analysis.services import liveness
from analysis.services.build import report_check, report_refresh
from config.runtime.background import EmbeddedInBackground
from config.runtime.heartbeat import heartbeat

SURVIVES_LOST_WORKER = {"acks_late": True, "reject_on_worker_lost": True}


def _report(report_id):
    return Report.objects.filter(pk=report_id).select_related("dataset", "survey").first()


@shared_task(name="analysis.report_refresh", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def report_refresh_task(report_id):
    report = _report(report_id)
    if report is None or not liveness.report_begin(report=report):  # deleted since it was queued, or lost too often
        return None
    try:
        with heartbeat(Report.objects.filter(pk=report_id)):
            report_refresh(report=report)
    finally:
        liveness.report_end(report=report)
    return report.pk


@shared_task(name="analysis.report_check", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def report_check_task(report_id):
    """Compare the inputs' fingerprint with the cached report's; recompute when they differ."""
    report = _report(report_id)
    if report is None:
        return None
    with heartbeat(Report.objects.filter(pk=report_id)):
        return report_check(report=report)
