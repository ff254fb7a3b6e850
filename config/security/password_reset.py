"""Password-reset mail, throttled per address and per client, as login is (config/security/login_throttle.py).

Django's reset form sends a mail to every account with the address typed, as often as it is asked:
anyone could bury a researcher's mailbox (and the lab's mail server's reputation) in reset mails.

- Per address: at most PASSWORD_RESET_MAILS_PER_ADDRESS mails per PASSWORD_RESET_THROTTLE_MINUTES.
  A request past it sends nothing, silently: the page is the same "check your e-mail" as for any
  address, known or not, so the limit tells no one whether the address has an account.
- Per client (its address as login throttling counts it: an IPv6 /64 as one): at most
  PASSWORD_RESET_REQUESTS_PER_CLIENT requests per window, whatever addresses they name; past it the
  client gets 429 and a page that says when to try again. That page depends only on the client's
  own requests, so it reveals nothing about any account either. Refused requests do not count.

The requests are counted in the database (config.models.PasswordResetRequest), so the limits hold
across every web process, with or without a shared cache; rows older than the window are deleted.
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.db import transaction
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone
from django.utils.crypto import salted_hmac

from config.models import PasswordResetRequest
from config.security.login_throttle import client_ip

logger = logging.getLogger("config.password_reset")  # its name before the move: log settings (and tests) name it


def _window():
    return timedelta(minutes=settings.PASSWORD_RESET_THROTTLE_MINUTES)


def address_digest(email):
    """A keyed digest of the address as Django's form matches it (case-insensitively)."""
    # The salt names this module where it was when digests began to be stored: a new one would orphan them.
    return salted_hmac("config.password_reset.address", email.strip().casefold(), algorithm="sha256").hexdigest()


class ThrottledPasswordResetView(auth_views.PasswordResetView):
    def post(self, request, *args, **kwargs):
        now = timezone.now()
        since = now - _window()
        client = client_ip(request)[:64]
        PasswordResetRequest.objects.filter(requested_at__lt=since).delete()
        recent = PasswordResetRequest.objects.filter(requested_at__gte=since)
        from_client = recent.filter(client=client)
        if from_client.count() >= settings.PASSWORD_RESET_REQUESTS_PER_CLIENT:
            return self._throttled(request, first=from_client.order_by("requested_at").first().requested_at)
        form = self.get_form()
        if not form.is_valid():
            PasswordResetRequest.objects.create(client=client, requested_at=now)
            return self.form_invalid(form)
        digest = address_digest(form.cleaned_data["email"])
        with transaction.atomic():
            mailed = recent.filter(address_digest=digest, mailed=True).count()
            allowed = mailed < settings.PASSWORD_RESET_MAILS_PER_ADDRESS
            PasswordResetRequest.objects.create(address_digest=digest, client=client, mailed=allowed, requested_at=now)
        if not allowed:
            # The same answer as a mail sent: the limit must not tell whether the address has an account.
            logger.warning(
                "password reset: no mail, %s mails in %s minutes to this address already (client %s)",
                mailed,
                settings.PASSWORD_RESET_THROTTLE_MINUTES,
                client,
            )
            return HttpResponseRedirect(self.get_success_url())
        return self.form_valid(form)

    def _throttled(self, request, *, first):
        until = first + _window()
        minutes = max(1, round((until - timezone.now()).total_seconds() / 60))
        logger.warning("password reset: client %s refused, over its limit", client_ip(request))
        context = {
            "retry_at": until,
            "minutes": minutes,
            "limit": settings.PASSWORD_RESET_REQUESTS_PER_CLIENT,
            "window_minutes": settings.PASSWORD_RESET_THROTTLE_MINUTES,
        }
        return render(request, "registration/password_reset_throttled.html", context, status=429)
