"""The judges a researcher registers: what a judge may name (key variables, hosts), and its settings.

A judge names an OpenAI-compatible endpoint and the environment variable that holds its key. Both
are the researcher's choice, so both are checked here when a judge is added and again before every
run (the operator's lists and assignments may have changed since).
"""

import os
import re
from urllib.parse import urlparse

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError

from scoring.judges import prompts
from scoring.judges.addresses import literal_problem, userinfo_problem
from scoring.judges.client import JudgeSettings
from scoring.models import Judge


class JudgeRefusal(Exception):
    """A judge that cannot run as asked (unknown, missing API key, wrong template); says why."""


# The key goes as a Bearer token to the judge's base URL, which its researcher chooses: a judge
# naming another researcher's key, the lab's, or the server's own credentials would send them to
# any server. So a judge may name only a variable the operator assigned to its owner or to everyone
# (JUDGE_KEY_VARIABLES), and even then not one named like RateLab's own secrets or services.
_KEY_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*_KEY$")
_SERVER_SECRETS = re.compile(
    r"SECRET|PASSWORD|^(AWS|PROLIFIC|MTURK|DJANGO|DATABASE|CELERY|REDIS|EMAIL)_", re.IGNORECASE
)


def assigned_key_variables(owner):
    """The key variables the operator assigned to `owner` or to everyone (JUDGE_KEY_VARIABLES)."""
    assigned = django_settings.JUDGE_KEY_VARIABLES
    username = getattr(owner, "username", None)
    own = assigned.get(username, ()) if username and username != "*" else ()
    return tuple(dict.fromkeys((*own, *assigned.get("*", ()))))


def api_key_env_problem(name, *, owner):
    """Why `owner`'s judge may not read its API key from `name`, or "" when it may (empty: no key).

    Says nothing of whether the variable exists: it is never read unless assigned."""
    if not name:
        return ""
    if name not in assigned_key_variables(owner):
        mine = assigned_key_variables(owner)
        return f"{name} is not a key variable assigned to you: the operator assigns them in JUDGE_KEY_VARIABLES. " + (
            f"Yours: {', '.join(mine)}." if mine else "None is assigned to you."
        )
    return key_variable_name_problem(name)


def key_variable_name_problem(name):
    """Why no judge may read its key from `name`, assigned or not (a server secret's name), or ""."""
    if not _KEY_VARIABLE.match(name) or _SERVER_SECRETS.search(name):
        return (
            f"{name} cannot be a judge's key variable: name one that holds only the judge's API key and ends "
            "in _KEY (e.g. OPENAI_API_KEY), not one of the server's own secrets (AWS_, PROLIFIC_, DJANGO_, "
            "...SECRET..., ...PASSWORD...)."
        )
    return ""


def base_url_problem(url):
    """Why the workers may not send requests to `url`, or "" when they may.

    The researcher chooses the URL, so the operator may list the allowed hosts (JUDGE_ALLOWED_HOSTS).
    With or without a list: no user-info; link-local addresses (169.254.0.0/16, fe80::/10, and IPv4
    ones written as IPv6: cloud metadata services) never; loopback, private and other non-global
    addresses only with JUDGE_ALLOW_PRIVATE_HOSTS=1. Host names are checked here only as written
    (localhost); the workers resolve them before sending and check every address
    (scoring.judges.addresses). Only http:// and https://: a
    URL field also takes ftp:// and ftps://, which no chat-completions client speaks (the judge was
    added and every request of its first run failed). The form and judge_add both ask here.
    """
    scheme = urlparse(url).scheme.lower()
    if scheme not in ("http", "https"):
        return "Give an http:// or https:// address" + (f", not {scheme}://." if scheme else ".")
    problem = userinfo_problem(url)
    if problem:
        return problem
    host = (urlparse(url).hostname or "").lower().rstrip(".")
    if not host:
        return f"{url!r} names no host."
    problem = literal_problem(host, allow_private=django_settings.JUDGE_ALLOW_PRIVATE_HOSTS)
    if problem:
        return problem
    # Written as Django's ALLOWED_HOSTS are: "[::1]" for an IPv6 address, any case, maybe a final dot.
    allowed = [entry.lower().strip("[]").rstrip(".") for entry in django_settings.JUDGE_ALLOWED_HOSTS]
    if allowed and not any(_host_matches(host, entry) for entry in allowed):
        return (
            f"{host} is not among the hosts this server's judges may use (JUDGE_ALLOWED_HOSTS:"
            f" {', '.join(allowed)}); ask its operator to add it."
        )
    return ""


def _host_matches(host, entry):
    # as Django's ALLOWED_HOSTS: "*" any, ".example.org" the domain and its subdomains, else exact
    if entry in ("*", host):
        return True
    return entry.startswith(".") and (host.endswith(entry) or host == entry[1:])


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
