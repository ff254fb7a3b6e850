"""Who the browser on an annotator page is: the signed identity cookie and the client's address."""

import ipaddress

from django.conf import settings

from annotation.services.claims import worker_id_valid
from config.login_throttle import client_ip

WORKER_COOKIE = "ratelab_worker"
WORKER_SALT = "annotation.worker"
WORKER_COOKIE_AGE = 180 * 24 * 3600


def browser_identity(request):
    """`(worker_id, resume_code)` from the signed cookie; `(None, "")` when it is absent or forged.

    The cookie holds the worker id and, for identities made since resume codes exist, the code
    (so the browser that owns it can show it again; the server keeps only its digest).
    """
    value = request.get_signed_cookie(WORKER_COOKIE, default=None, salt=WORKER_SALT) or ""
    worker_id, _, code = value.partition(" ")
    return (worker_id, code) if worker_id_valid(worker_id) else (None, "")


def worker_from_cookie(request):
    return browser_identity(request)[0]


def with_identity_cookie(response, worker_id, code=""):
    response.set_signed_cookie(
        WORKER_COOKIE,
        f"{worker_id} {code}".strip(),
        salt=WORKER_SALT,
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
