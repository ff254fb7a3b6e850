"""LLM judge writes: register and remove judges, judge responses as the metric judge:<name>, judge pairs.

`judge_metric_values` is the hook through which `scoring.services.metric_chunks` computes `judge:<name>`
in chunks like every other metric (as `adem_metric_values` is for `adem:<name>`). Each prompt is
looked up in the cache first (judge, template version, prompt hash); only the misses are sent, and
each answer is stored as it arrives (with its tokens on the usage row), so a chunk retried after an
error, or redelivered after its worker was killed, asks only what is still missing.
"""

import collections
import contextlib
import hashlib
import json
import os
import re
from urllib.parse import urlparse

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F

from annotation.models import Response
from scoring.judges import pairwise, prompts
from scoring.judges.addresses import HostRefused, literal_problem, userinfo_problem
from scoring.judges.client import JudgeNotSent, JudgeRequestFailed, JudgeSettings, judge_prompts_stream
from scoring.judges.parsing import parse_preference, parse_rating
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage
from scoring.services.judge_turns import judge_pairs_turn

JUDGE_METRIC_PREFIX = "judge:"
EXAMPLE_CHARS = 500


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


# --- the metric judge:<name> ------------------------------------------------------------------


def judge_metric_names(*, owner):
    """Metric names of the owner's rating judges, for the metrics page (never computed unasked)."""
    if owner is None:
        return []
    judges = Judge.objects.filter(owner=owner).exclude(template=prompts.PAIRWISE).values_list("name", flat=True)
    return [JUDGE_METRIC_PREFIX + name for name in judges]


def judge_metric_check(metric, *, owner):
    """Refuse (KeyError, as for an unknown metric) a judge that does not exist, judges pairs, or
    lacks its API key: the page and the command say so before a run is created."""
    try:
        judge = _rating_judge(metric, owner)
        judge_settings(judge)
    except JudgeRefusal as refusal:
        raise KeyError(str(refusal)) from None


def _rating_judge(metric, owner):
    judge = judge_named(metric.removeprefix(JUDGE_METRIC_PREFIX), owner=owner)
    if prompts.get_template(judge.template).kind != prompts.RATING:
        raise JudgeRefusal(f"judge {judge.name!r} judges pairs ({judge.template}); use judge_pairs")
    return judge


def judge_metric_version(*, metric, owner):
    """Template and version plus a hash of what changes the answers (model, temperature, samples...)."""
    judge = judge_named(metric.removeprefix(JUDGE_METRIC_PREFIX), owner=owner)
    answers = json.dumps([judge.base_url, judge.model, judge.temperature, judge.samples, judge.max_tokens])
    return f"{prompts.get_template(judge.template).key}/{hashlib.sha256(answers.encode()).hexdigest()[:10]}"


def judge_metric_values(*, metric, response_ids, owner, run=None):
    """`{response_id: mean score or None}` of metric `judge:<name>` for these responses.

    None where no sample's reply could be read (counted on the run's usage row, with an example),
    and for the reference template where the context has no reference.
    """
    judge = _rating_judge(metric, owner)
    settings = judge_settings(judge)  # before any request
    template = prompts.get_template(judge.template)
    with_reference = template.name == prompts.RATING_WITH_REFERENCE
    responses = (
        Response.objects.filter(pk__in=list(response_ids))
        .select_related("context")
        .prefetch_related("context__references")
    )
    everyone, asked, messages = [], [], []
    for response in responses:
        everyone.append(response.pk)
        references = [r.text for r in response.context.references.all()]
        if with_reference and not references:
            continue
        asked.append(response.pk)
        messages.append(
            prompts.rating_messages(
                template,
                context=response.context.turns,
                response=response.text,
                reference=references[0] if references else "",
            )
        )
    entries = _judged(judge, settings, template, messages, parse_rating, run=run)
    means = dict(zip(asked, (entry.mean for entry in entries), strict=True))
    return {pk: means.get(pk) for pk in everyone}


# --- pairs -----------------------------------------------------------------------------------


def judge_pairs(*, judge, items, label=""):
    """Judge `items` (pairwise.PairItem) in both orders; returns (verdicts, statistics).

    The entry point for pairs from any source: a JSONL file today (the judge_pairs command). The
    integrator connects pairwise studies here by turning a study's pairs and their human winners
    into PairItem objects.
    """
    template = prompts.get_template(judge.template)
    if template.kind != prompts.PAIRWISE:
        raise JudgeRefusal(
            f"judge {judge.name!r} rates single responses ({judge.template}); add one with --template pairwise"
        )
    settings = judge_settings(judge)
    label = label or "pairs"
    messages = [m for item in items for m in pairwise.both_orders_messages(template, item)]
    # A second judging at the same time waits, then reads the cache. The figures are stored within
    # the turn too, so the two judgings' writes never overlap (on SQLite one would fail "locked").
    with judge_pairs_turn(judge):
        # Removed while this waited for its turn (the removal holds it): nothing to ask or store.
        if not Judge.objects.filter(pk=judge.pk).exists():
            raise JudgeRefusal(f"judge {judge.name!r} was removed before its pairs were judged")
        entries = _judged(judge, settings, template, messages, parse_preference, label=label)
        picks = [majority_pick(entry.values) for entry in entries]
        verdicts = [pairwise.verdict_from_picks(picks[2 * i], picks[2 * i + 1]) for i in range(len(items))]
        statistics = pairwise.pairwise_statistics(items, verdicts)
        # The judge's page shows them per judging, without reading the pairs again.
        JudgeUsage.objects.filter(judge=judge, run=None, label=label).update(figures=statistics)
    return verdicts, statistics


def majority_pick(values):
    """The most frequent readable pick of a prompt's samples; None when none, or on a tie."""
    counts = collections.Counter(v for v in values if v is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


# --- the cache, the requests and the usage -----------------------------------------------------


def _judged(judge, settings, template, messages, parse, *, run=None, label=""):
    """One JudgeCacheEntry per prompt: from the cache, or asked now and stored as it arrives.

    Each answer is stored (cache entry, and its requests and tokens on the usage row) as soon as it
    arrives, before the next is waited for: a chunk that dies later (an error, a killed worker)
    has paid for nothing it will ask again. A prompt asked twice (the same pair judged by two
    people) is asked and counted once. When some prompt failed, JudgeRequestFailed says how many
    failed and how many were not sent, so a retry asks only for what is still missing."""
    hashes = [prompts.prompt_hash(m) for m in messages]
    cached = JudgeCacheEntry.objects.filter(judge=judge, template_version=template.key, prompt_hash__in=set(hashes))
    found = {entry.prompt_hash: entry for entry in cached}
    missing = {h: m for h, m in zip(hashes, messages, strict=True) if h not in found}
    _usage_add(judge, run, label, answered=[], cached=len(found))
    asked = list(missing)
    failures, answered = [], 0
    # closed on any exception (a killed chunk): the prompts not yet sent are then not sent
    stream = contextlib.closing(judge_prompts_stream(settings, list(missing.values()), parse))
    try:
        with stream as batches:
            for batch in batches:
                new, example = [], ""
                for index, result in batch:
                    if isinstance(result, BaseException):
                        failures.append(result)
                        continue
                    if not example and result.unparseable:
                        unread = next(r for r, v in zip(result.replies, result.values, strict=True) if v is None)
                        example = unread or "(empty reply)"
                    new.append(_cache_entry(judge, template, asked[index], result))
                JudgeCacheEntry.objects.bulk_create(new, ignore_conflicts=True)  # a twin chunk may have stored it first
                found.update((entry.prompt_hash, entry) for entry in new)
                answered += len(new)
                _usage_add(judge, run, label, answered=new, cached=0, example=example[:EXAMPLE_CHARS])
    except HostRefused as refused:
        raise JudgeRefusal(f"judge {judge.name!r}: {refused}") from None
    if failures:
        raise JudgeRequestFailed(_failures_message(failures, asked=len(asked), answered=answered))
    return [found[h] for h in hashes]


def _cache_entry(judge, template, prompt_hash, result):
    rating = template.kind == prompts.RATING
    return JudgeCacheEntry(
        judge=judge,
        template_version=template.key,
        prompt_hash=prompt_hash,
        values=result.values,
        mean=result.mean if rating else None,
        spread=result.spread if rating else None,
        first_reply=(result.replies[0] if result.replies else "")[:EXAMPLE_CHARS],
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
    )


def _failures_message(failures, *, asked, answered):
    """How the prompts not in the cache ended ("10 failed, 8 not sent, 2 answered of 20 asked"), the
    first real failure, and, when the endpoint proved unreachable, why the rest were not sent."""
    sent = [f for f in failures if not isinstance(f, JudgeNotSent)]
    not_sent = [f for f in failures if isinstance(f, JudgeNotSent)]
    counts = [f"{len(sent)} failed"] + ([f"{len(not_sent)} not sent"] if not_sent else [])
    message = f"{', '.join(counts)}, {answered} answered, of {asked} prompt(s) not in the cache; "
    message += f"first failure: {(sent or failures)[0]}."
    if not_sent:
        message += (
            f" Stopped once {not_sent[0]}: the {len(not_sent)} not sent were neither charged nor stored;"
            " judging again asks only for what is missing."
        )
    return message


def judge_usage_row(judge, run, label):
    """The usage row of `judge` in metric run `run`, or (no run) in the judging labelled `label`."""
    if run is not None:
        return JudgeUsage.objects.get_or_create(judge=judge, run=run, label="")[0]
    # With no run the unique constraint is no guard (NULLs are distinct in SQL): two judgings of the
    # same pairs at once (a double click queues two) would each insert a row, and get_or_create would
    # then fail every later judging with MultipleObjectsReturned. The judge's row, locked, serialises
    # them, and the oldest row is the one used should twins exist already.
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).first()
        usage = JudgeUsage.objects.filter(judge=judge, run=None, label=label).order_by("pk").first()
        if usage is None:
            usage = JudgeUsage.objects.create(judge=judge, run=None, label=label)
    return usage


def _usage_add(judge, run, label, *, answered, cached, example=""):
    """Add to the usage row: `cached` prompts found in the cache, and the `answered` cache entries
    just stored (a prompt each, its requests and tokens: what was paid for)."""
    usage = judge_usage_row(judge, run, label)
    JudgeUsage.objects.filter(pk=usage.pk).update(  # F(): chunks of one run may add at the same time
        prompts=F("prompts") + cached + len(answered),
        cached=F("cached") + cached,
        requests=F("requests") + sum(len(e.values) for e in answered),
        prompt_tokens=F("prompt_tokens") + sum(e.prompt_tokens for e in answered),
        completion_tokens=F("completion_tokens") + sum(e.completion_tokens for e in answered),
        unparseable=F("unparseable") + sum(sum(v is None for v in e.values) for e in answered),
    )
    if example:
        JudgeUsage.objects.filter(pk=usage.pk, unparseable_example="").update(unparseable_example=example)


def judge_create_or_refuse(**fields):
    """`judge_create`, its ValidationError turned into one readable JudgeRefusal (the command's)."""
    try:
        return judge_create(**fields)
    except ValidationError as error:
        problems = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())
        raise JudgeRefusal(problems) from None
