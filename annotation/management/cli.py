"""Small helpers shared by the annotation commands."""

import os
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotation.models import Dataset


def user_or_error(username):
    if not username:
        return None
    try:
        return get_user_model().objects.get(username=username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"no user named {username!r}") from None


def dataset_or_error(name):
    try:
        return Dataset.objects.get(name=name)
    except Dataset.DoesNotExist:
        raise CommandError(f"no dataset named {name!r}") from None


def quiet_broken_pipe():
    """The reader of stdout (e.g. `| head`) stopped early: not an error. Silence the final flush."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
