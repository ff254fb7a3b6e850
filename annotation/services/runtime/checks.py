"""System checks for settings that are easy to get wrong (ids `ratelab.E001`...)."""

import os
from urllib.parse import urlparse

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register
from django.db import DatabaseError

from annotation.models import Survey


def _url_problem(url):
    """Why `url` cannot be the app's public address, or "" when it can."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return f"PUBLIC_BASE_URL={url!r} is not an absolute URL such as https://ratelab.example.org."
    return ""


@register()
def check_public_base_url(app_configs, **kwargs):
    """ratelab.E002 / ratelab.W001: PUBLIC_BASE_URL, when set, is an absolute https URL."""
    url = settings.PUBLIC_BASE_URL
    if not url:
        return []
    problem = _url_problem(url)
    if problem:
        return [Error(problem, hint="Set it to the address annotators open.", id="ratelab.E002")]
    if urlparse(url).scheme != "https":
        return [
            Warning(
                f"PUBLIC_BASE_URL={url!r} is not https; MTurk only shows HIT pages served over HTTPS.",
                hint="Serve RateLab over HTTPS and use the https:// address.",
                id="ratelab.W001",
            )
        ]
    return []


@register(Tags.database)
def check_mturk_needs_public_url(app_configs, databases=None, **kwargs):
    """ratelab.E001: a survey uses MTurk but PUBLIC_BASE_URL is missing or not https.

    It reads the database, so it runs with `check --database default` and before `migrate`.
    """
    if not databases:
        return []
    url = settings.PUBLIC_BASE_URL
    if url and not _url_problem(url) and urlparse(url).scheme == "https":
        return []
    try:
        mturk_surveys = list(Survey.objects.filter(provider=Survey.Provider.MTURK).values_list("name", flat=True)[:3])
    except DatabaseError:
        return []  # tables not created yet: nothing can use MTurk
    if not mturk_surveys:
        return []
    return [
        Error(
            f"Survey {mturk_surveys[0]!r} uses MTurk, but PUBLIC_BASE_URL is "
            f"{'missing' if not url else repr(url) + ', not an https URL'}.",
            hint="Set PUBLIC_BASE_URL to the public https:// address of this RateLab; MTurk HITs link to it.",
            id="ratelab.E001",
        )
    ]


@register(Tags.database)
def check_prolific_settings(app_configs, databases=None, **kwargs):
    """ratelab.E003: a survey uses Prolific but PROLIFIC_API_TOKEN or an https PUBLIC_BASE_URL is missing.

    Only whether the token is set is looked at; its value is never read into a message.
    """
    if not databases:
        return []
    try:
        names = list(Survey.objects.filter(provider=Survey.Provider.PROLIFIC).values_list("name", flat=True)[:1])
    except DatabaseError:
        return []
    if not names:
        return []
    missing = []
    if not os.environ.get("PROLIFIC_API_TOKEN"):
        missing.append("PROLIFIC_API_TOKEN is not set")
    url = settings.PUBLIC_BASE_URL
    if not url or _url_problem(url) or urlparse(url).scheme != "https":
        missing.append(f"PUBLIC_BASE_URL is {'missing' if not url else repr(url) + ', not an https URL'}")
    if not missing:
        return []
    return [
        Error(
            f"Survey {names[0]!r} uses Prolific, but {' and '.join(missing)}.",
            hint="Set PROLIFIC_API_TOKEN (Prolific > Settings > API tokens) and PUBLIC_BASE_URL to the public "
            "https:// address of this RateLab in the environment; see docs/prolific.md.",
            id="ratelab.E003",
        )
    ]
