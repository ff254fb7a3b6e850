"""What the judge_* commands share: whose judges they mean."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotation.management.cli import user_or_error


def add_judge_owner_argument(parser):
    parser.add_argument(
        "--owner",
        default="",
        help="Username of the researcher the judge belongs to (needed when there are several users).",
    )


def judge_owner(username):
    """The named user, or the only user there is; a clear error otherwise."""
    if username:
        return user_or_error(username)
    users = list(get_user_model().objects.order_by("pk")[:2])
    if len(users) != 1:
        raise CommandError("say whose judge this is with --owner USERNAME (judges belong to one researcher)")
    return users[0]
