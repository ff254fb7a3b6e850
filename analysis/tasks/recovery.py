"""The watchdog: find reports whose requested computation no worker is doing any more, and re-queue or fail them.

The analysis side of scoring/watchdog.py (same settings, same beat interval, same command). A
report is waiting for a computation from its `requested_at` until its `computed_at` passes it;
when its last sign of life (the request, or a heartbeat of the task computing it) is older than
RUN_STALL_SECONDS, the computation is queued again, or the report fails once it has been started
RUN_MAX_ATTEMPTS times.
"""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db.models import F, Q
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from analysis.models import Report
from analysis.services import liveness
from analysis.tasks.report import report_refresh_task

logger = logging.getLogger(__name__)


def reports_recover(*, now=None):
    """Returns {"requeued": [...], "finished": [], "failed": [...]} (report ids)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.RUN_STALL_SECONDS)
    waiting = (
        Report.objects.defer("data", "vectors")
        .exclude(status=Report.Status.FAILED)
        .filter(requested_at__isnull=False)
        .filter(Q(computed_at__isnull=True) | Q(requested_at__gt=F("computed_at")))
        # Greatest is NULL on SQLite if either side is: the heartbeat defaults to the request
        .annotate(last_sign=Greatest("requested_at", Coalesce("heartbeat_at", "requested_at")))
        .filter(last_sign__lt=cutoff)
    )
    outcome = {"requeued": [], "finished": [], "failed": []}
    for report in waiting:
        if report.attempts >= settings.RUN_MAX_ATTEMPTS:
            liveness.report_fail_lost(report=report)
            outcome["failed"].append(report.pk)
            continue
        last = Q(heartbeat_at=report.heartbeat_at) if report.heartbeat_at else Q(heartbeat_at__isnull=True)
        if Report.objects.filter(last, pk=report.pk).update(heartbeat_at=now):  # not again for a while
            report_refresh_task.delay(report.pk)
            outcome["requeued"].append(report.pk)
    for action, ids in outcome.items():
        if ids:
            logger.warning("watchdog: report %s %s", action, ", ".join(map(str, ids)))
    return outcome


@shared_task(name="analysis.recover_runs", ignore_result=True)
def recover_runs():
    """The periodic check of reports (Celery beat; see config/celery.py)."""
    return {"reports": reports_recover()}
