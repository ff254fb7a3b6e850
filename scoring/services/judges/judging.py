"""LLM judges at work: judge responses as the metric judge:<name>, judge pairs.

`judge_metric_values` is the hook through which `scoring.services.metrics.chunks` computes `judge:<name>`
in chunks like every other metric (as `adem_metric_values` is for `adem:<name>`). Each prompt is
looked up in the cache first (judge, template version, prompt hash); only the misses are sent, and
each answer is stored as it arrives (with its tokens on the usage row), so a chunk retried after an
error, or redelivered after its worker was killed, asks only what is still missing.
"""

import collections
import contextlib
import functools
import hashlib
import json

from django.db import transaction
from django.db.models import F

from annotation.models import Response
from config.endpoints.addresses import HostRefused
from scoring.judges import pairwise, prompts
from scoring.judges.client import JudgeNotSent, JudgeRequestFailed, judge_prompts_stream
from scoring.judges.parsing import parse_preference, parse_rating, parse_score
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage
from scoring.services.judges.registry import JudgeRefusal, judge_named, judge_settings
from scoring.services.judges.turns import judge_pairs_turn

JUDGE_METRIC_PREFIX = "judge:"
EXAMPLE_CHARS = 500


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


def judge_turn_values(*, metric, turns, owner, label=""):
    """`{key: mean score or None}` of the rating judge `judge:<name>` on conversation turns (issue
    37's turn level): `turns` is `[(key, conversation so far: [{"speaker", "text"}], turn text)]`,
    each turn judged as the next turn of its conversation, as a response is of its context. A
    template that needs a reference gives None throughout: a conversation's turn has none."""
    judge = _rating_judge(metric, owner)
    settings = judge_settings(judge)  # before any request
    template = prompts.get_template(judge.template)
    if template.name == prompts.RATING_WITH_REFERENCE:
        return {key: None for key, _context, _text in turns}
    messages = [prompts.rating_messages(template, context=context, response=text) for _k, context, text in turns]
    entries = _judged(judge, settings, template, messages, parse_rating, label=label or "conversation turns")
    return {key: entry.mean for (key, _context, _text), entry in zip(turns, entries, strict=True)}


def judge_conversation_values(*, metric, conversations, aspect, owner, label=""):
    """`{key: mean score or None}` of the rating judge `judge:<name>` on whole conversations (issue
    37's conversation level): `conversations` is `[(key, turns: [{"speaker", "text"}])]`, `aspect`
    `{"key", "question", "low", "high", "low_label", "high_label"}`; each conversation is asked once
    (per sample) with the whole-conversation prompt, and a reply is read on the aspect's own scale.
    Any rating judge may: the prompt is the whole-conversation one, not the judge's own template."""
    judge = _rating_judge(metric, owner)
    settings = judge_settings(judge)  # before any request
    template = prompts.CONVERSATION
    low, high = aspect["low"], aspect["high"]
    messages = [
        prompts.conversation_messages(
            template, turns=turns, aspect=aspect["key"], question=aspect.get("question", ""), low=low, high=high,
            low_label=aspect.get("low_label", ""), high_label=aspect.get("high_label", ""),
        )
        for _key, turns in conversations
    ]  # fmt: skip
    parse = functools.partial(parse_score, low=low, high=high)
    entries = _judged(judge, settings, template, messages, parse, label=label or "whole conversations")
    return {key: entry.mean for (key, _turns), entry in zip(conversations, entries, strict=True)}


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


def judging_done(*, metric, owner, label, scores):
    """Mark the judging labelled `label` done on the usage row of rating judge `metric` (what the
    judge's page reads as done), with the number of scores stored; an earlier failure's reason goes."""
    judge = judge_named(metric.removeprefix(JUDGE_METRIC_PREFIX), owner=owner)
    usage = judge_usage_row(judge, None, label)
    figures = {key: value for key, value in (usage.figures or {}).items() if key not in ("error", "failed_at")}
    JudgeUsage.objects.filter(pk=usage.pk).update(figures={**figures, "scores": scores})


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
