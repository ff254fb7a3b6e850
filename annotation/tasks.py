"""Celery tasks of the annotation app: thin wrappers around services."""

from celery import shared_task

from annotation.services import assignments_expire


@shared_task(name="annotation.expire_assignments")
def expire_assignments():
    """Return abandoned assignments to the pool (scheduled by Celery beat every few minutes)."""
    return assignments_expire()
