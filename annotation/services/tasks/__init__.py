"""Celery tasks of the annotation app's shared machinery: thin wrappers around services.

Celery's autodiscovery imports `annotation.services.tasks` (config/celery.py names the package), so
every task module is imported here. The crowd providers' tasks live beside their provider
(annotation/crowd/mturk/tasks.py, prolific/tasks.py).
"""

from annotation.services.tasks import assignments, pages  # noqa: F401
