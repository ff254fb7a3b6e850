"""Bearer tokens for the ADEM scoring API: only a key's sha256 is stored; the key is shown once."""

import hashlib
import secrets

from django.utils import timezone

from scoring.models import ApiToken


def api_token_create(*, user, name=""):
    """A new scoring-API key for the user; returns the key (only its hash is kept)."""
    key = secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, key_sha256=hashlib.sha256(key.encode()).hexdigest())
    return key


def api_token_user(*, key):
    """The user a bearer key belongs to, or None."""
    token = ApiToken.objects.select_related("user").filter(key_sha256=hashlib.sha256(key.encode()).hexdigest()).first()
    if token is None or not token.user.is_active:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


def api_token_revoke(*, user, token_id):
    """Delete one of the user's tokens (a script using it gets 401 from now on); returns its name,
    or None when the user has no such token."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        return None
    token.delete()
    return token.name or f"token {token_id}"


def api_tokens_revoke_all(*, user):
    """Delete every API token of the user; returns how many there were."""
    return ApiToken.objects.filter(user=user).delete()[0]


class RevokeApiTokensOnPasswordChange:
    """A password "validator" that validates nothing: Django calls its `password_changed` whenever a
    user's new password is saved (the reset link, the admin's form, `manage.py changepassword`), but
    not when Django only re-hashes the same password on login after a hasher upgrade.

    A token is a password of its own that a script keeps: whoever learnt the old password may have
    made one, so a new password ends them all, as it ends the user's other sessions. The owner makes
    new ones on the API tokens page (the password forms and the reset's last page say so).
    """

    def validate(self, password, user=None):
        return None

    def password_changed(self, password, user=None):
        if user is not None and user.pk is not None:
            api_tokens_revoke_all(user=user)

    def get_help_text(self):
        return "A new password revokes your scoring-API tokens: scripts need new ones."
