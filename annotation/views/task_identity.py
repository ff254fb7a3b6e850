"""Who the browser on an annotator page is: the signed identity cookie and the client's address."""

import ipaddress

from django.conf import settings

from annotation.models import Survey
from annotation.services.claims import worker_id_valid
from config.login_throttle import client_ip

WORKER_COOKIE = "ratelab_worker"
WORKER_SALT = "annotation.worker"
WORKER_COOKIE_AGE = 180 * 24 * 3600


def _cookie_for(survey):
    """The cookie's name and salt that carry this browser's identity for `survey`.

    The built-in link's identities are made here, with resume codes, and hold across its surveys.
    A link platform's or Prolific's id is only what was typed into that survey's URL: anyone may
    type any id into another survey's link, so that cookie proves no more than that this browser
    started this one survey under the id, and counts nowhere else (another survey, platform, or
    the built-in link, where it would hand over someone's task).
    """
    if survey.provider == Survey.Provider.LOCAL:
        return WORKER_COOKIE, WORKER_SALT
    return f"{WORKER_COOKIE}_{survey.pk}", f"{WORKER_SALT}.{survey.provider}.{survey.pk}"


def browser_identity(request, *, survey):
    """`(worker_id, resume_code)` from the signed cookie; `(None, "")` when it is absent or forged.

    The cookie holds the worker id and, for identities made since resume codes exist, the code
    (so the browser that owns it can show it again; the server keeps only its digest).
    """
    name, salt = _cookie_for(survey)
    value = request.get_signed_cookie(name, default=None, salt=salt) or ""
    worker_id, _, code = value.partition(" ")
    return (worker_id, code) if worker_id_valid(worker_id) else (None, "")


def worker_from_cookie(request, *, survey):
    return browser_identity(request, survey=survey)[0]


def with_identity_cookie(response, worker_id, code="", *, survey):
    name, salt = _cookie_for(survey)
    response.set_signed_cookie(
        name,
        f"{worker_id} {code}".strip(),
        salt=salt,
        max_age=WORKER_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        # Secure follows the session cookie: on in production, off for plain-http development.
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def client_address(request):
    """The client's network address as login throttling reads it (REMOTE_ADDR, or with
    TRUSTED_PROXY_COUNT = n the address the n-th proxy from us saw; an IPv6 one as the first address
    of its /64, which one subscriber holds whole), or None when it is no address."""
    return _address_or_none(client_ip(request))


def _address_or_none(text):
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None
