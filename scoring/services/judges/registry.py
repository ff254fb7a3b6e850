"""The judges a researcher registers, and their client settings.

A judge names an OpenAI-compatible endpoint and the environment variable that holds its key. Both
are the researcher's choice, so both are checked (config.endpoints.rules) when a judge is added and
again before every run (the operator's lists and assignments may have changed since).
"""

import os

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError

# The rules live below both layers (config.endpoints): chat systems (annotation) obey the same ones.
from config.endpoints.rules import (  # noqa: F401  (re-exported: the judge forms, views and tests ask here)
    api_key_env_problem,
    assigned_key_variables,
    base_url_problem,
    key_variable_name_problem,
)
from scoring.judges import prompts
from scoring.judges.client import JudgeSettings
from scoring.models import Judge


class JudgeRefusal(Exception):
    """A judge that cannot run as asked (unknown, missing API key, wrong template); says why."""


# --- registry --------------------------------------------------------------------------------


def judge_create(*, owner, name, base_url, model, api_key_env="", template=prompts.RATING, **options):
    """A new judge of `owner`; ValidationError (per field) on bad input, and nothing is created."""
    judge = Judge(
        owner=owner, name=name, base_url=base_url, model=model, api_key_env=api_key_env, template=template, **options
    )
    judge.full_clean()
    problems = {
        "api_key_env": api_key_env_problem(api_key_env, owner=owner),
        "base_url": base_url_problem(base_url),
    }
    problems = {field: problem for field, problem in problems.items() if problem}
    if problems:
        raise ValidationError(problems)
    judge.save()
    return judge


def judge_named(name, *, owner):
    judge = Judge.objects.filter(owner=owner, name=name).first()
    if judge is None:
        raise JudgeRefusal(f"no judge named {name!r}; add one with judge_add or on the Judges page")
    return judge


def judge_settings(judge):
    """The client settings of `judge`, its API key read from the environment variable it names.

    A variable not assigned to the judge's owner (now: the operator may have taken it back) is
    refused here, before it is read and before any request is made; so is one unset or empty."""
    api_key = None
    # both again at every run: the judge may predate the rule, the operator's lists or assignments
    problem = api_key_env_problem(judge.api_key_env, owner=judge.owner) or base_url_problem(judge.base_url)
    if problem:
        raise JudgeRefusal(f"judge {judge.name!r}: {problem}")
    if judge.api_key_env:
        api_key = os.environ.get(judge.api_key_env)
        if not api_key:
            raise JudgeRefusal(
                f"judge {judge.name!r} reads its API key from the environment variable {judge.api_key_env}, "
                "which is not set (set it where the Celery workers run, and where compute_metrics runs without "
                "a broker)"
            )
    return JudgeSettings(
        base_url=judge.base_url,
        model=judge.model,
        api_key=api_key or "no-key",
        temperature=judge.temperature,
        max_tokens=judge.max_tokens,
        samples=judge.samples,
        concurrency=judge.concurrency,
        # a request's limit and the SDK's retries (429/5xx/timeouts, honouring Retry-After)
        timeout=float(django_settings.JUDGE_TIMEOUT_SECONDS),
        connect_timeout=float(django_settings.JUDGE_CONNECT_TIMEOUT_SECONDS),
        max_retries=django_settings.JUDGE_MAX_RETRIES,
        allow_private=django_settings.JUDGE_ALLOW_PRIVATE_HOSTS,
    )


def judge_create_or_refuse(**fields):
    """`judge_create`, its ValidationError turned into one readable JudgeRefusal (the command's)."""
    try:
        return judge_create(**fields)
    except ValidationError as error:
        problems = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
        raise JudgeRefusal(problems) from None
