"""Reads of LLM judges: whose judges a user may see or change."""

from scoring.models import Judge


def judges_visible_to(*, user):
    """A researcher's own judges: a judge names an endpoint and a key variable, so no one else, staff
    included, reads it."""
    if user is None or not user.is_authenticated:
        return Judge.objects.none()
    return Judge.objects.filter(owner=user)


def judges_changeable_by(*, user):
    return judges_visible_to(user=user)
