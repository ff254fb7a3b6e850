"""Celery tasks of the analysis app and what queues them.

Celery's autodiscovery imports this package (`analysis.tasks`): importing the two task modules
here registers every task under its unchanged name (`analysis.report_refresh`,
`analysis.report_check`, `analysis.recover_runs`). `scheduling` (when a page queues a computation)
and `recovery` (the watchdog) queue them.
"""

from analysis.tasks import recovery, report  # noqa: F401 (registers the tasks with Celery)
