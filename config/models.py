"""The project's own rows outside the apps: password-reset requests, counted for their throttle."""

from django.db import models


class PasswordResetRequest(models.Model):
    """One request for a password-reset mail, kept for PASSWORD_RESET_THROTTLE_MINUTES
    (config/security/password_reset.py counts them per address and per client, then deletes them).

    The address is kept only as a keyed digest: the form is anonymous, and most addresses typed
    into it may belong to nobody here.
    """

    address_digest = models.CharField(max_length=64, blank=True)
    client = models.CharField(
        max_length=64, blank=True, help_text="The client's address as login throttling counts it."
    )
    mailed = models.BooleanField(
        default=False, help_text="Within the address's limit: a mail went out (if it names an account)."
    )
    requested_at = models.DateTimeField(db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["address_digest", "requested_at"]),
            models.Index(fields=["client", "requested_at"]),
        ]

    def __str__(self):
        return f"password reset request from {self.client} at {self.requested_at:%Y-%m-%d %H:%M}"
