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
