"""Reads of metric scores shared by the scoring pages and the analysis app."""

from django.db.models import Avg, Count

from annotation.models import Reference, Response
from scoring.metrics import bleu
from scoring.models import ConversationMetricScore, MetricRun, MetricScore, TurnMetricScore


def metric_scores(*, dataset, metrics=None):
    """`{metric: {response_id: value}}` for the dataset's responses (values may be None)."""
    rows = MetricScore.objects.filter(response__context__dataset=dataset)
    if metrics is not None:
        rows = rows.filter(metric__in=list(metrics))
    scores = {}
    for metric, response_id, value in rows.values_list("metric", "response_id", "value").iterator(chunk_size=10_000):
        scores.setdefault(metric, {})[response_id] = value
    return scores


def metric_extras(dataset, response_ids):
    """Response-extras provider (annotation.services.extensions.points): `{response_id: {"metrics": {name: value}}}`."""
    # Found by id and checked against the dataset here, not in SQL: given both the dataset join and
    # the id list, SQLite walks every context of the dataset and probes the whole list for each, so
    # the JSONL export of 3,000 contexts x 5 systems spent 13 s in this query. By id alone it is one
    # index search per id; the dataset column still keeps another dataset's scores out.
    rows = MetricScore.objects.filter(response_id__in=list(response_ids)).order_by("metric")
    extras = {}
    for response_id, metric, value, dataset_id in rows.values_list(
        "response_id", "metric", "value", "response__context__dataset_id"
    ):
        if dataset_id == dataset.pk:
            extras.setdefault(response_id, {"metrics": {}})["metrics"][metric] = value
    return extras


def metric_summary(*, dataset):
    """Mean score per (system, metric): `{system: {metric: (mean, n)}}` for the metrics page."""
    rows = (
        MetricScore.objects.filter(response__context__dataset=dataset)
        .values("response__system__name", "metric")
        .annotate(mean=Avg("value"), n=Count("value"))
        .order_by("response__system__name", "metric")
    )
    summary = {}
    for row in rows:
        summary.setdefault(row["response__system__name"], {})[row["metric"]] = (row["mean"], row["n"])
    return summary


def metric_summary_by_metric(summary):
    """The same means turned for the page: systems as columns, one row per metric.

    Returns `(systems, [(metric, [(mean, n) or None per system])])`, so 28 metrics × 5 systems is one
    table that scrolls in its own box instead of five tables one under another."""
    systems = sorted(summary)
    metrics = sorted({metric for scores in summary.values() for metric in scores})
    return systems, [(metric, [summary[system].get(metric) for system in systems]) for metric in metrics]


def corpus_bleu_by_system(*, dataset):
    """pycocoevalcap's corpus BLEU-1..4 per system over responses that have references."""
    refs = {}
    for context_id, text in Reference.objects.filter(context__dataset=dataset).values_list("context_id", "text"):
        refs.setdefault(context_id, []).append(text)
    by_system = {}
    for system, text, context_id in Response.objects.filter(context__dataset=dataset).values_list(
        "system__name", "text", "context_id"
    ):
        if context_id in refs:
            hyps, system_refs = by_system.setdefault(system, ([], []))
            hyps.append(text)
            system_refs.append(refs[context_id])
    return {system: bleu.corpus_bleu(hyps, system_refs) for system, (hyps, system_refs) in sorted(by_system.items())}


def latest_run(*, dataset):
    return MetricRun.objects.filter(dataset=dataset).first()


def turn_metric_scores(*, dataset):
    """`{metric: {turn_id: value}}` for the system turns of the dataset's conversations (values may be None)."""
    rows = TurnMetricScore.objects.filter(turn__conversation__dataset=dataset)
    scores = {}
    for metric, turn_id, value in rows.values_list("metric", "turn_id", "value").iterator(chunk_size=10_000):
        scores.setdefault(metric, {})[turn_id] = value
    return scores


def conversation_metric_scores(*, dataset):
    """`{metric: {conversation_id: value}}` for the dataset's conversations (values may be None)."""
    rows = ConversationMetricScore.objects.filter(conversation__dataset=dataset)
    scores = {}
    for metric, conversation_id, value in rows.values_list("metric", "conversation_id", "value").iterator(
        chunk_size=10_000
    ):
        scores.setdefault(metric, {})[conversation_id] = value
    return scores
