"""Shared bits of the mturk_* commands."""

from django.core.management.base import CommandError

from annotation.models import Survey


def mturk_survey(name):
    """A survey by name (or id) that uses MTurk."""
    surveys = Survey.objects.filter(provider=Survey.Provider.MTURK)
    survey = surveys.filter(name=name).first() or (surveys.filter(pk=name).first() if name.isdigit() else None)
    if survey is None:
        raise CommandError(f"No MTurk survey named {name!r}.")
    return survey
