"""What a researcher's endpoint (an LLM judge, a chat system) may name: its base URL and its key variable.

Both are the researcher's choice, so both are checked when the endpoint is added and again before
every request (the operator's lists and assignments may have changed since). Judges and chat systems
share the operator's settings: JUDGE_ALLOWED_HOSTS and JUDGE_ALLOW_PRIVATE_HOSTS for where requests
may go, JUDGE_KEY_VARIABLES for which environment variables each researcher's endpoints may read.
`noun` ("judge", "chat system") only words the refusals.
"""

import re
from urllib.parse import urlparse

from django.conf import settings as django_settings

from config.endpoints.addresses import literal_problem, userinfo_problem

# The key goes as a Bearer token to the endpoint's base URL, which its researcher chooses: an endpoint
# naming another researcher's key, the lab's, or the server's own credentials would send them to
# any server. So it may name only a variable the operator assigned to its owner or to everyone
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


def api_key_env_problem(name, *, owner, noun="judge"):
    """Why `owner`'s endpoint may not read its API key from `name`, or "" when it may (empty: no key).

    Says nothing of whether the variable exists: it is never read unless assigned."""
    if not name:
        return ""
    if name not in assigned_key_variables(owner):
        mine = assigned_key_variables(owner)
        return f"{name} is not a key variable assigned to you: the operator assigns them in JUDGE_KEY_VARIABLES. " + (
            f"Yours: {', '.join(mine)}." if mine else "None is assigned to you."
        )
    return key_variable_name_problem(name, noun=noun)


def key_variable_name_problem(name, *, noun="judge"):
    """Why no endpoint may read its key from `name`, assigned or not (a server secret's name), or ""."""
    if not _KEY_VARIABLE.match(name) or _SERVER_SECRETS.search(name):
        return (
            f"{name} cannot be a {noun}'s key variable: name one that holds only the {noun}'s API key and ends "
            "in _KEY (e.g. OPENAI_API_KEY), not one of the server's own secrets (AWS_, PROLIFIC_, DJANGO_, "
            "...SECRET..., ...PASSWORD...)."
        )
    return ""


def base_url_problem(url, *, noun="judge"):
    """Why the server may not send requests to `url`, or "" when it may.

    The researcher chooses the URL, so the operator may list the allowed hosts (JUDGE_ALLOWED_HOSTS).
    With or without a list: no user-info; link-local addresses (169.254.0.0/16, fe80::/10, and IPv4
    ones written as IPv6: cloud metadata services) never; loopback, private and other non-global
    addresses only with JUDGE_ALLOW_PRIVATE_HOSTS=1. Host names are checked here only as written
    (localhost); the client resolves them before sending and checks every address
    (config.endpoints.addresses). Only http:// and https://: a URL field also takes ftp:// and
    ftps://, which no chat-completions client speaks (the endpoint was added and every request
    failed). The forms and the add commands all ask here.
    """
    scheme = urlparse(url).scheme.lower()
    if scheme not in ("http", "https"):
        return "Give an http:// or https:// address" + (f", not {scheme}://." if scheme else ".")
    problem = userinfo_problem(url, noun=noun)
    if problem:
        return problem
    host = (urlparse(url).hostname or "").lower().rstrip(".")
    if not host:
        return f"{url!r} names no host."
    problem = literal_problem(host, allow_private=django_settings.JUDGE_ALLOW_PRIVATE_HOSTS, noun=noun)
    if problem:
        return problem
    # Written as Django's ALLOWED_HOSTS are: "[::1]" for an IPv6 address, any case, maybe a final dot.
    allowed = [entry.lower().strip("[]").rstrip(".") for entry in django_settings.JUDGE_ALLOWED_HOSTS]
    if allowed and not any(_host_matches(host, entry) for entry in allowed):
        return (
            f"{host} is not among the hosts this server's {noun}s may use (JUDGE_ALLOWED_HOSTS:"
            f" {', '.join(allowed)}); ask its operator to add it."
        )
    return ""


def _host_matches(host, entry):
    # as Django's ALLOWED_HOSTS: "*" any, ".example.org" the domain and its subdomains, else exact
    if entry in ("*", host):
        return True
    return entry.startswith(".") and (host.endswith(entry) or host == entry[1:])
