"""The Celery app. Eager (in-process) unless CELERY_BROKER_URL names a broker."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ratelab")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _expire_assignments_schedule(sender, **kwargs):
    # Abandoned assignment slots go back to the pool (the `expire_assignments` command does the same).
    sender.add_periodic_task(
        300.0, sender.signature("annotation.expire_assignments"), name="annotation-expire-assignments"
    )


# MTurk's tasks live beside the provider in annotation/tasks_mturk.py; beat syncs live MTurk surveys.
app.autodiscover_tasks(["annotation"], related_name="tasks_mturk")
app.conf.beat_schedule["mturk-sync-live-surveys"] = {
    "task": "annotation.tasks_mturk.sync_live_surveys",
    "schedule": 300.0,
}
# Tasks that live below an app package (annotation/quality/tasks.py).
app.autodiscover_tasks(["annotation.quality"])
