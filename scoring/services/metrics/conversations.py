"""Compute and store the reference-free metrics of a dataset's conversations (issue 37).

The pure engine (scoring.metrics.conversation) measures each conversation from its turns; this
service reads the turns, runs it and writes one ConversationMetricScore row per (conversation,
metric). A run replaces the named metrics' rows of the dataset in one transaction, so a report
never reads half a run. Six simple metrics take seconds for thousands of conversations, so the
command and the page run it at once, without a Celery run of chunks as responses have.
"""

import math

from django.db import transaction

from annotation.exporting.conversations import conversation_records
from scoring.metrics import conversation as engine
from scoring.models import ConversationMetricScore

WRITE_BATCH = 2000


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
