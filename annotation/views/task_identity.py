"""Who the browser on an annotator page is: the signed identity cookie and the client's address."""

import ipaddress

from django.conf import settings
from django.core import signing

from annotation.models import Survey
from annotation.services.claims import worker_id_valid
from annotation.services.identities import resume_code_new, resume_code_normalised
from config.security.login_throttle import client_ip

WORKER_COOKIE = "ratelab_worker"
WORKER_SALT = "annotation.worker"
WORKER_COOKIE_AGE = 180 * 24 * 3600
# Before a browser has an identity: the resume code its first Start will give the new identity.
START_COOKIE = "ratelab_start"
START_SALT = "annotation.start"


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
    if survey.provider == Survey.Provider.LOCAL:
        # Its work is done once the browser has an identity; a browser whose identity cookie is
        # later cleared starts as someone new, not as the identity this code made.
        response.delete_cookie(START_COOKIE, samesite="Lax")
    return response


def start_code_signed(request):
    """The signed resume code that the start page's form carries (and the start cookie holds) for a
    browser without an identity: the one an earlier start page gave this browser, else a new one.

    So every tab of the browser presses Start with the same code, and the first press's identity is
    the one all of them get (`identity_create`); a browser that keeps no cookie still sends its own
    page's code twice on a double press. Signed: a client cannot choose a code, only return ours.
    """
    kept = request.COOKIES.get(START_COOKIE, "")
    return kept if start_code_from(kept) else signing.dumps(resume_code_new(), salt=START_SALT)


def start_code_from(signed):
    """The resume code in a signed start value (the form's field or the cookie), or None."""
    try:
        code = signing.loads(signed or "", salt=START_SALT, max_age=WORKER_COOKIE_AGE)
    except signing.BadSignature:
        return None
    return code if isinstance(code, str) and len(resume_code_normalised(code)) == 20 else None


def with_start_cookie(response, signed):
    response.set_cookie(
        START_COOKIE,
        signed,
        max_age=WORKER_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
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
