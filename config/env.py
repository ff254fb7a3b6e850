"""Typed readers for environment variables.

Every reader fails loudly with the variable's name and the offending value, so a
typo in a deployment shows up at start-up rather than as odd behaviour later.
"""

import os
import re
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name, default=""):
    return os.environ.get(name, default)


def env_bool(name, default):
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use 1/0, true/false, yes/no or on/off.")


def env_int(name, default, *, minimum=None):
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}.")
    return value


def env_choice(name, default, *, choices):
    """One of `choices` (as written there); anything else fails naming the allowed values."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of: {', '.join(choices)}.")
    return value


def env_list(name, default=()):
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name, default, *, schemes):
    """A URL whose scheme must be one of `schemes`; returns it unchanged."""
    raw = os.environ.get(name, default)
    if not raw:
        return raw
    parsed = urlparse(raw)
    if parsed.scheme not in schemes:
        allowed = ", ".join(sorted(schemes))
        raise ImproperlyConfigured(f"{name}={_redact(raw)!r} has scheme {parsed.scheme!r}; expected one of: {allowed}.")
    return raw


def _redact(url):
    """Hide a password in a URL before it goes into an error message."""
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url


_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def env_assignments(name):
    """`owner:VARIABLE` pairs, comma-separated ("alice:ALICE_KEY,*:LAB_KEY"), as
    `{owner: (variable, ...)}`; "*" is everyone. Unset or empty: {} (nothing assigned)."""
    raw = os.environ.get(name, "")
    assigned = {}
    for entry in raw.split(","):
        item = entry.strip()
        if not item:
            continue
        owner, colon, variable = (part.strip() for part in item.partition(":"))
        if not colon or not owner or not re.fullmatch(_ENV_NAME, variable) or any(c.isspace() for c in owner):
            raise ImproperlyConfigured(
                f"{name}: {item!r} is not OWNER:VARIABLE (a username or *, a colon, an environment variable name),"
                " e.g. alice:ALICE_OPENAI_KEY,*:LAB_OPENAI_KEY."
            )
        if variable not in assigned.setdefault(owner, ()):
            assigned[owner] += (variable,)
    return assigned
