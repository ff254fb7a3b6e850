"""Celery task that returns abandoned assignments to the pool."""

from celery import shared_task

from annotation.services.slots import assignments_expire


@shared_task(name="annotation.expire_assignments")
def expire_assignments():
    """Return abandoned assignments to the pool (scheduled by Celery beat every few minutes)."""
    return assignments_expire()
