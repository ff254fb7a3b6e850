"""Shared bits of the mturk_* commands."""

from annotation.management.cli import survey_or_error
from annotation.models import Survey


def mturk_survey(name, owner=""):
    """A survey by name (or id) that uses MTurk; --owner says whose when several researchers use the name."""
    return survey_or_error(name, owner, surveys=Survey.objects.filter(provider=Survey.Provider.MTURK))
