"""Login throttling with django-axes: who the client is, and the page a locked-out client sees."""

import ipaddress

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max
from django.shortcuts import render
from django.utils import timezone


class LoginThrottleBackend(AxesStandaloneBackend):
    """Axes' lockout check on every login through a request (the login page, the admin's).

    A call without a request (the test client's `login()`, a script) has no address to throttle;
    axes would refuse it outright, so it is passed on to the next backend unchecked.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


# A subscriber is given a whole IPv6 /64 (RFC 6177 recommends at least that much per site) and may
# send from any of its 2**64 addresses: per single address, each try could come from a new one.
IPV6_CLIENT_PREFIX = 64


def client_ip(request):
    """The client's address as every per-client limit counts it (login throttling, the hourly cap
    on new annotators): `client_peer_address`, an IPv6 one as the first address of its /64."""
    return client_network(client_peer_address(request))


def client_peer_address(request):
    """The client's address: the peer's, or the one TRUSTED_PROXY_COUNT proxies wrote before it.

    Each trusted proxy appends the address it received the request from to X-Forwarded-For, so
    with n proxies the client's is the n-th from the right; anything further left the client wrote
    itself and is not trusted.
    """
    count = settings.TRUSTED_PROXY_COUNT
    if count:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= count:
            return forwarded[-count]
    return request.META.get("REMOTE_ADDR", "")


def client_network(text):
    """IPv4 as it is (also when a dual-stack socket wrote it as ::ffff:a.b.c.d); IPv6 as the first
    address of its /64, a valid address that the address columns store; anything else unchanged."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return text
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    # from the integer, so that a zone ("fe80::1%eth0") does not reach the network's parser
    return str(ipaddress.IPv6Network((int(address), IPV6_CLIENT_PREFIX), strict=False).network_address)


def retry_at(request, credentials):
    """When the lock on this username and address ends: the last counted failure plus the cool-off."""
    last = AccessAttempt.objects.filter(
        username=get_client_username(request, credentials), ip_address=client_ip(request)
    ).aggregate(last=Max("attempt_time"))["last"]
    return (last or timezone.now()) + settings.AXES_COOLOFF_TIME


def lockout_response(request, original_response=None, credentials=None):
    """The locked-out page (HTTP 429): says how long the lock lasts and when to try again."""
    until = retry_at(request, credentials)
    minutes = max(1, round((until - timezone.now()).total_seconds() / 60))
    context = {
        "retry_at": until,
        "minutes": minutes,
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "lockout_minutes": round(settings.AXES_COOLOFF_TIME.total_seconds() / 60),
    }
    return render(request, "registration/locked.html", context, status=429)
