"""Celery tasks of the analysis app: thin wrappers that load a row and call a service."""

from celery import shared_task

from analysis.models import Report
from analysis.services import report_check, report_refresh


def _report(report_id):
    return Report.objects.filter(pk=report_id).select_related("dataset", "survey").first()


@shared_task(name="analysis.report_refresh")
def report_refresh_task(report_id):
    report = _report(report_id)
    if report is None:  # deleted since it was queued
        return None
    report_refresh(report=report)
    return report.pk


@shared_task(name="analysis.report_check")
def report_check_task(report_id):
    """Compare the inputs' fingerprint with the cached report's; recompute when they differ."""
    report = _report(report_id)
    if report is None:
        return None
    return report_check(report=report)
