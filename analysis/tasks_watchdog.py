"""The periodic check of reports (Celery beat; see config/celery.py and analysis/watchdog.py)."""

from celery import shared_task

from analysis import watchdog


@shared_task(name="analysis.recover_runs", ignore_result=True)
def recover_runs():
    return {"reports": watchdog.reports_recover()}
