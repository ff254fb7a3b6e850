"""System checks for settings that are easy to get wrong (ids `ratelab.E001`...)."""

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
