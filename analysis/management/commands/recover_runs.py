"""python manage.py recover_runs: the watchdog's check, once (for deployments without Celery beat).

Re-queues metric runs, ADEM runs and reports that no worker has shown a sign of life on for
RUN_STALL_SECONDS, closes metric runs whose chunks are all stored, and fails those whose work was
lost with its worker RUN_MAX_ATTEMPTS times. Run it from cron every minute or two where no
`celery beat` runs; in the embedded mode (no broker) the re-queued work runs in this command.
"""

from django.core.management.base import BaseCommand

from analysis.tasks.recovery import reports_recover
from scoring.services.watchdog import metric_runs_recover, training_runs_recover


class Command(BaseCommand):
    help = "Re-queue, close or fail runs (metrics, ADEM, reports) whose worker stopped."

    def handle(self, *args, **options):
        checks = {"metric runs": metric_runs_recover, "ADEM runs": training_runs_recover, "reports": reports_recover}
        for label, check in checks.items():
            outcome = check()
            parts = [f"{len(ids)} {action} ({', '.join(map(str, ids))})" for action, ids in outcome.items() if ids]
            self.stdout.write(f"{label}: {'; '.join(parts) if parts else 'nothing stalled'}")
