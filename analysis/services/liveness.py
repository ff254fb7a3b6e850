"""What a worker records on a report as it computes it, so that a report outlives a worker that dies.

The same rules as scoring/liveness.py: each start is counted and stamps the heartbeat; a
computation started RUN_MAX_ATTEMPTS times without ending (its worker died each time) fails the
report with an error that says so; one that ends, well or not, clears the count.
"""

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from analysis.models import Report


def report_begin(*, report):
    """True if the report is to be computed now; counts the start."""
    if report.attempts >= settings.RUN_MAX_ATTEMPTS:
        report_fail_lost(report=report)
        return False
    Report.objects.filter(pk=report.pk).update(attempts=F("attempts") + 1, heartbeat_at=timezone.now())
    return True


def report_end(*, report):
    Report.objects.filter(pk=report.pk).update(attempts=0)


def report_fail_lost(*, report):
    error = (
        f"The computation of this report was started {report.attempts} times and never finished: the worker "
        "running it stopped each time (killed, out of memory, shut down, or past the hard time limit). Refresh "
        "the report once the workers are healthy."
    )
    Report.objects.filter(pk=report.pk).update(status=Report.Status.FAILED, error=error, attempts=0)
