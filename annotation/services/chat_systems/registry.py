"""A researcher's chat systems: add, change, remove, and the client settings of one.

The base URL and the key variable are the researcher's choice, so both are checked when a system is
added or changed and again before every request (config.endpoints.rules: the operator's lists and
assignments may have changed since). A key variable not assigned to the owner is never read.
"""

import os

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import ChatSystem
from config.endpoints.client import NO_KEY, EndpointSettings
from config.endpoints.rules import api_key_env_problem, base_url_problem

NOUN = "chat system"  # how the shared rules word their refusals
# One request per turn: an annotator waiting for a reply would rather be told and try again than sit
# through the SDK's backoff (the judges' default retries 4 times, up to minutes).
MAX_RETRIES = 0
EDITABLE_FIELDS = (
    "name",
    "base_url",
    "model",
    "api_key_env",
    "system_prompt",
    "temperature",
    "max_tokens",
    "timeout_seconds",
    "connect_timeout_seconds",
)


class ChatSystemRefusal(Exception):
    """A chat system that cannot be used as asked (unknown name, a refused host or key variable, a key
    variable not set); says why in words fit for its owner."""


def endpoint_problems(*, owner, base_url, api_key_env):
    """{field: why} for a base URL or key variable the operator's rules refuse (empty: none)."""
    problems = {
        "api_key_env": api_key_env_problem(api_key_env, owner=owner, noun=NOUN),
        "base_url": base_url_problem(base_url, noun=NOUN),
    }
    return {field: problem for field, problem in problems.items() if problem}


def _checked_save(system):
    system.full_clean()
    problems = endpoint_problems(owner=system.owner, base_url=system.base_url, api_key_env=system.api_key_env)
    if problems:
        raise ValidationError(problems)
    system.save()
    return system


def chat_system_create(*, owner, name, base_url, model, **options):
    """A new chat system of `owner`; ValidationError (per field) on bad input, and nothing is created."""
    unknown = set(options) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown chat system fields: {', '.join(sorted(unknown))}")
    return _checked_save(ChatSystem(owner=owner, name=name, base_url=base_url, model=model, **options))


@transaction.atomic
def chat_system_update(*, system, **changes):
    """`system` with `changes` (EDITABLE_FIELDS) applied; ValidationError and nothing saved on bad input."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown chat system fields: {', '.join(sorted(unknown))}")
    for field, value in changes.items():
        setattr(system, field, value)
    return _checked_save(system)


def chat_system_delete(*, system):
    """Delete `system`; ChatSystemRefusal while a live chat survey talks to it (its chats, running or
    finished, would lose their system mid-conversation): the surveys are named, nothing is deleted."""
    with transaction.atomic():
        system = ChatSystem.objects.select_for_update().get(pk=system.pk)
        surveys = sorted(set(system.chat_surveys.values_list("survey__name", flat=True)))
        if surveys or system.chat_hits.exists():
            shown = ", ".join(surveys[:5]) + (" and more" if len(surveys) > 5 else "")
            raise ChatSystemRefusal(
                f"Chat system {system.name} is used by the live chat survey{'s' if len(surveys) != 1 else ''} "
                f"{shown}: delete {'them' if len(surveys) != 1 else 'it'} first (its conversations keep their system)."
            )
        system.delete()


def chat_system_create_or_refuse(**fields):
    """`chat_system_create`, its ValidationError turned into one readable ChatSystemRefusal (the command's)."""
    try:
        return chat_system_create(**fields)
    except ValidationError as error:
        problems = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
        raise ChatSystemRefusal(problems) from None


def chat_system_settings(system):
    """The client settings of `system`, its API key read from the variable it names.

    A base URL or key variable the rules refuse now is refused here, before the variable is read
    and before any request; so is a key variable that is unset or empty."""
    problems = endpoint_problems(owner=system.owner, base_url=system.base_url, api_key_env=system.api_key_env)
    if problems:
        raise ChatSystemRefusal(f"chat system {system.name!r}: {' '.join(problems.values())}")
    api_key = ""
    if system.api_key_env:
        api_key = os.environ.get(system.api_key_env, "")
        if not api_key:
            raise ChatSystemRefusal(
                f"chat system {system.name!r} reads its API key from the environment variable "
                f"{system.api_key_env}, which is not set where RateLab runs"
            )
    return EndpointSettings(
        base_url=system.base_url,
        model=system.model,
        api_key=api_key or NO_KEY,
        temperature=system.temperature,
        max_tokens=system.max_tokens,
        timeout=float(system.timeout_seconds),
        connect_timeout=float(system.connect_timeout_seconds),
        max_retries=MAX_RETRIES,
        allow_private=django_settings.JUDGE_ALLOW_PRIVATE_HOSTS,
    )


def key_state(system):
    """For the system's owner: whether its key variable, if assigned to them, is set where RateLab
    runs. A variable not assigned to them is never read, so this tells nothing of the server's others."""
    if not system.api_key_env:
        return "no key needed"
    problem = api_key_env_problem(system.api_key_env, owner=system.owner, noun=NOUN)
    if problem:
        return f"${system.api_key_env} is refused: {problem}"
    state = "is set" if os.environ.get(system.api_key_env) else "is NOT set"
    return f"${system.api_key_env} {state}"
