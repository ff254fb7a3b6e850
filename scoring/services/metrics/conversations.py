"""Compute and store the reference-free metrics of a dataset's conversations (issue 37).

The pure engine (scoring.metrics.conversation) measures each conversation from its turns; this
service reads the turns, runs it and writes one ConversationMetricScore row per (conversation,
metric). A run replaces the named metrics' rows of the dataset in one transaction, so a report
never reads half a run. Six simple metrics take seconds for thousands of conversations, so the
command and the page run it at once, without a Celery run of chunks as responses have.
"""

import math

from django.db import transaction

from annotation.kinds.conversation.questions import WHOLE_ASPECTS
from annotation.models import Aspect, ConversationAspect, ConversationRating, ConversationTurn
from annotation.services.exporting.conversations import conversation_records
from scoring.judges.prompts import CONVERSATION
from scoring.metrics import conversation as engine
from scoring.models import ConversationMetricScore, TurnMetricScore

WRITE_BATCH = 2000
# A conversation-level judge's scores of one aspect are the metric judge:<name>@<aspect>: the report
# sets them against that aspect's ratings only (a judge asked about engagement says nothing of
# consistency), and shows them as judge:<name> in that aspect's rows.
ASPECT_SEPARATOR = "@"
METRIC_MAX = ConversationMetricScore._meta.get_field("metric").max_length


def conversation_metric_names(metrics=None):
    """Validated names, in the engine's order; the simple metrics when none are named (MiniLM
    coherence loads a neural model, so it runs only when named). ValueError for an unknown name."""
    if not metrics:
        return list(engine.SIMPLE)
    unknown = sorted(set(metrics) - set(engine.ALL))
    if unknown:
        raise ValueError(f"unknown conversation metric(s): {', '.join(unknown)}; choose from {', '.join(engine.ALL)}")
    return [name for name in engine.ALL if name in metrics]


def conversation_metrics_compute(*, dataset, metrics=None):
    """Score every conversation of `dataset` with `metrics` (names; default the simple ones) and
    store the scores. Returns `{"conversations": n, "metrics": [names], "scores": rows written}`."""
    names = conversation_metric_names(metrics)
    pks = list(dataset.conversations.order_by("position").values_list("pk", flat=True))
    records = conversation_records(dataset)  # the same file order as `pks`
    values = engine.conversation_metrics([record["turns"] for record in records], names)
    rows = [
        ConversationMetricScore(conversation_id=pk, metric=name, version=engine.VERSION, value=_finite(value))
        for name in names
        for pk, value in zip(pks, values[name], strict=True)
    ]
    with transaction.atomic():
        ConversationMetricScore.objects.filter(conversation__dataset=dataset, metric__in=names).delete()
        ConversationMetricScore.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    return {"conversations": len(pks), "metrics": names, "scores": len(rows)}


def _finite(value):
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def turn_metric_names(metrics=None):
    """Validated turn-level names (the simple ones when none are named); ValueError for an unknown name."""
    if not metrics:
        return list(engine.TURN_SIMPLE)
    unknown = sorted(set(metrics) - set(engine.TURN_ALL))
    if unknown:
        raise ValueError(f"unknown turn metric(s): {', '.join(unknown)}; choose from {', '.join(engine.TURN_ALL)}")
    return [name for name in engine.TURN_ALL if name in metrics]


def turn_metrics_compute(*, dataset, metrics=None):
    """Score every system turn of `dataset`'s conversations with the turn metrics `metrics` (names;
    default the simple ones), each turn's context the conversation so far, and store the scores
    (replacing those metrics' rows of the dataset in one transaction). Returns `{"turns": scored
    system turns, "metrics": [names], "scores": rows written}`."""
    names = turn_metric_names(metrics)
    pks = list(dataset.conversations.order_by("position").values_list("pk", flat=True))
    records = conversation_records(dataset)  # the same file order as `pks`
    per_conversation = engine.turn_metrics([record["turns"] for record in records], names)
    turn_pk = {
        (conversation, index): pk
        for conversation, index, pk in ConversationTurn.objects.filter(conversation__dataset=dataset).values_list(
            "conversation_id", "index", "pk"
        )
    }
    rows = [
        TurnMetricScore(turn_id=turn_pk[(conversation, index)], metric=name, version=engine.VERSION,
                        value=_finite(value))
        for conversation, per_turn in zip(pks, per_conversation, strict=True)
        for index, values in per_turn.items()
        for name, value in values.items()
    ]  # fmt: skip
    with transaction.atomic():
        TurnMetricScore.objects.filter(turn__conversation__dataset=dataset, metric__in=names).delete()
        TurnMetricScore.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    n_turns = sum(len(per_turn) for per_turn in per_conversation)
    return {"turns": n_turns, "metrics": names, "scores": len(rows)}


def turn_judge_compute(*, dataset, metric):
    """Judge every system turn of `dataset` with the owner's rating judge `metric` (`judge:<name>`),
    its context the conversation so far, and store the means as TurnMetricScore rows of that name
    (replacing the judge's earlier ones). Answers come from the judge's cache where it has them.
    Returns `{"turns": judged, "metric": metric, "scores": rows written}`."""
    from scoring.services.judges.judging import judge_metric_version, judge_turn_values, judging_done

    pks = list(dataset.conversations.order_by("position").values_list("pk", flat=True))
    records = conversation_records(dataset)
    turn_pk = {
        (conversation, index): pk
        for conversation, index, pk in ConversationTurn.objects.filter(conversation__dataset=dataset).values_list(
            "conversation_id", "index", "pk"
        )
    }
    asked = []
    for conversation, record in zip(pks, records, strict=True):
        turns = [{"speaker": t["speaker"], "text": t["text"]} for t in record["turns"]]
        for index, turn in enumerate(turns):
            if turn["speaker"] == engine.SYSTEM_SPEAKER:
                asked.append((turn_pk[(conversation, index)], turns[:index], turn["text"]))
    values = judge_turn_values(metric=metric, turns=asked, owner=dataset.owner, label=turns_label(dataset))
    version = judge_metric_version(metric=metric, owner=dataset.owner)
    rows = [
        TurnMetricScore(turn_id=pk, metric=metric, version=version, value=_finite(values[pk])) for pk, _c, _t in asked
    ]
    with transaction.atomic():
        TurnMetricScore.objects.filter(turn__conversation__dataset=dataset, metric=metric).delete()
        TurnMetricScore.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    judging_done(metric=metric, owner=dataset.owner, label=turns_label(dataset), scores=len(rows))
    return {"turns": len(asked), "metric": metric, "scores": len(rows)}


def conversations_label(dataset):
    """The judge usage row of a judging of the dataset's whole conversations (and of the page's)."""
    return f"conversations of {dataset.name}"[:200]


def turns_label(dataset):
    """The judge usage row of a judging of the dataset's system turns."""
    return f"turns of {dataset.name}"[:200]


def judge_aspects(*, dataset, keys=None):
    """The whole-conversation aspects a judge is asked about, each `{"key", "question", "low",
    "high", "low_label", "high_label"}`: `keys` (named), else every aspect the dataset's whole
    conversations are rated on, else `overall`. The wording and end labels are the dataset's
    survey's where one asks the aspect, else RateLab's default wording; the scale is the dataset's
    (as its ratings were imported or collected), else the survey's, else 1-5. ValueError for a
    named aspect that is rated per turn only."""
    ratings = ConversationRating.objects.filter(conversation__dataset=dataset)
    rated = set(ratings.filter(turn=None).values_list("aspect", flat=True))
    survey_aspects = Aspect.objects.filter(survey__dataset=dataset)
    whole = rated | set(survey_aspects.filter(per_turn=False).values_list("key", flat=True))
    per_turn = set(ratings.exclude(turn=None).values_list("aspect", flat=True))
    per_turn_only = (per_turn | set(survey_aspects.filter(per_turn=True).values_list("key", flat=True))) - whole
    if keys:
        refused = sorted(set(keys) & per_turn_only)
        if refused:
            raise ValueError(f"aspect(s) {', '.join(refused)} are rated per turn, not on whole conversations; "
                             "a whole-conversation judge asks about whole-conversation aspects")  # fmt: skip
        chosen = list(dict.fromkeys(keys))
    else:
        chosen = sorted(rated, key=lambda key: (key != "overall", key)) or ["overall"]
    scales = {
        key: (low, high)
        for key, low, high in ConversationAspect.objects.filter(dataset=dataset).values_list(
            "key", "scale_min", "scale_max"
        )
    }
    asked = {a.key: a for a in Aspect.objects.filter(survey__dataset=dataset, per_turn=False).order_by("-survey_id")}
    defaults = {key: (question, low, high) for key, question, low, high in WHOLE_ASPECTS}
    aspects = []
    for key in chosen:
        survey_aspect = asked.get(key)
        low, high = scales.get(key) or ((survey_aspect.scale_min, survey_aspect.scale_max) if survey_aspect else (1, 5))
        question, low_label, high_label = defaults.get(key, ("", "", ""))
        if survey_aspect is not None:
            labels = survey_aspect.scale_labels or {}
            question = survey_aspect.question
            low_label, high_label = labels.get(str(low), low_label), labels.get(str(high), high_label)
        aspects.append({"key": key, "question": question, "low": low, "high": high, "low_label": low_label,
                        "high_label": high_label})  # fmt: skip
    return aspects


def conversation_judge_metric(metric, aspect):
    """The stored name of judge `metric` (judge:<name>) on whole conversations for `aspect`."""
    return f"{metric}{ASPECT_SEPARATOR}{aspect}"


def conversation_judge_compute(*, dataset, metric, aspects=None):
    """Judge every conversation of `dataset` as a whole with the owner's rating judge `metric`
    (`judge:<name>`), once per aspect (`aspects`: keys; default in `judge_aspects`), and store the
    means as ConversationMetricScore rows judge:<name>@<aspect> (replacing that judge's earlier
    rows of those aspects in one transaction). Answers come from the judge's cache where it has
    them, and each new one is cached as it arrives, so a failed run retried buys nothing twice; a
    failure stores no score. Returns `{"conversations": n, "aspects": [keys], "scores": rows}`."""
    from scoring.services.judges.judging import judge_conversation_values, judge_metric_version, judging_done

    chosen = judge_aspects(dataset=dataset, keys=aspects)
    names = {a["key"]: conversation_judge_metric(metric, a["key"]) for a in chosen}
    too_long = [name for name in names.values() if len(name) > METRIC_MAX]
    if too_long:
        raise ValueError(f"{too_long[0]!r} is longer than {METRIC_MAX} characters: give the judge a shorter name")
    pks = list(dataset.conversations.order_by("position").values_list("pk", flat=True))
    records = conversation_records(dataset)  # the same file order as `pks`
    conversations = [
        (pk, [{"speaker": t["speaker"], "text": t["text"]} for t in record["turns"]])
        for pk, record in zip(pks, records, strict=True)
    ]
    # the whole-conversation prompt's key and the hash of what changes the judge's answers
    answers_hash = judge_metric_version(metric=metric, owner=dataset.owner).rsplit("/", 1)[1]
    version = f"{CONVERSATION.key}/{answers_hash}"
    rows = []
    for aspect in chosen:  # every aspect asked before any is stored: a failure leaves the old scores whole
        values = judge_conversation_values(
            metric=metric, conversations=conversations, aspect=aspect, owner=dataset.owner,
            label=conversations_label(dataset),
        )  # fmt: skip
        rows += [
            ConversationMetricScore(conversation_id=pk, metric=names[aspect["key"]], version=version,
                                    value=_finite(values[pk]))
            for pk, _turns in conversations
        ]  # fmt: skip
    with transaction.atomic():
        ConversationMetricScore.objects.filter(conversation__dataset=dataset, metric__in=list(names.values())).delete()
        ConversationMetricScore.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    judging_done(metric=metric, owner=dataset.owner, label=conversations_label(dataset), scores=len(rows))
    return {"conversations": len(pks), "aspects": [a["key"] for a in chosen], "scores": len(rows)}
