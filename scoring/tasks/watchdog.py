"""The periodic check of scoring's runs (Celery beat; see config/celery.py and scoring/services/watchdog.py)."""

from celery import shared_task

from scoring.services import watchdog


@shared_task(name="scoring.recover_runs", ignore_result=True)
def recover_runs():
    return {
        "metric_runs": watchdog.metric_runs_recover(),
        "training_runs": watchdog.training_runs_recover(),
    }
