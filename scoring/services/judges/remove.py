"""Removing an LLM judge: its row, cached answers and usage records, and its `judge:<name>` scores.

Beside registry.py and judging.py rather than in them, as adem/delete.py is beside adem/training.py:
removing shares nothing with judging but the tables.

What goes, and why:
- its `judge:<name>` metric scores on its owner's datasets: kept, they would be shown as the
  scores of any later judge of the same name (and reports would keep a metric nobody can rerun);
- its cached answers: they are keyed by the judge, so no other judge could ever read them; a judge
  added again under the same name asks (and pays) again;
- its usage records (requests, tokens, cost): their cost is the judge's prices times the tokens,
  so without the judge they could not be read; the confirm page shows their totals first;
- its pairwise verdicts live only in its cache, so reports' pairwise sections no longer list it.
"""

from datetime import timedelta

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from scoring.judges import prompts
from scoring.models import ConversationMetricScore, Judge, MetricRun, MetricScore, TurnMetricScore
from scoring.services.judges.registry import JudgeRefusal
from scoring.services.judges.turns import judge_pairs_idle

OPEN_METRICS = (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING)
# A judging of pairs clears its queued mark when it ends, even on a refusal or a failed request, and
# a lost worker's task is delivered again; only a message the broker lost for good leaves its mark.
# Past this age the mark no longer holds the judge (the task, were it to come, finds no judge).
QUEUED_PAIRS_FORGOTTEN = timedelta(days=1)


class JudgeBusy(JudgeRefusal):
    """A job using the judge is queued or running: removing now would pull its rows from under it."""


def judge_metrics_busy(*, judge):
    """Why the judge cannot be removed now because of a metrics run (a sentence), or ""."""
    if prompts.get_template(judge.template).kind == prompts.PAIRWISE:
        return ""  # a pairwise judge is no metric: no metrics run can use it
    open_runs = MetricRun.objects.filter(dataset__owner=judge.owner_id, status__in=OPEN_METRICS)
    # Compared in Python: `metrics` is a JSON list, and JSON containment differs between databases.
    scoring = next(
        (run for run in open_runs.select_related("dataset").order_by("pk") if judge.metric_name in run.metrics), None
    )
    if scoring is None:
        return ""
    return (
        f"Judge {judge.name} is scoring dataset {scoring.dataset.name} (metrics run {scoring.pk}, "
        f"{scoring.status}): remove it when that run has ended."
    )


def judge_pairs_queued_busy(*, judge):
    """Why the judge cannot be removed now because a judging of pairs is queued (or running), or ""."""
    since = timezone.now() - QUEUED_PAIRS_FORGOTTEN
    queued = judge.usage.filter(run=None, queued_at__gte=since).order_by("queued_at", "pk").first()
    if queued is None:
        return ""
    return (
        f"Judge {judge.name} has a judging of the {queued.label} queued or running (since "
        f"{queued.queued_at:%Y-%m-%d %H:%M} UTC): remove it when that judging has ended."
    )


def _pairs_busy(judge):
    return f"Judge {judge.name} is judging a dataset's pairs right now: remove it when that judging has ended."


def judge_busy(*, judge):
    """Why the judge cannot be removed now (a sentence), or "" when no job of it is queued or running.

    A metrics run computing `judge:<name>` on one of its owner's datasets (queued or running), a
    judging of pairs queued from the judge's page (its usage row's mark), or one holding the judge's
    turn (also those started by the judge_pairs command, which marks nothing)."""
    busy = judge_metrics_busy(judge=judge) or judge_pairs_queued_busy(judge=judge)
    if busy:
        return busy
    with judge_pairs_idle(judge) as idle:
        return "" if idle else _pairs_busy(judge)


def judge_scores(*, judge):
    """The judge's stored scores: metric `judge:<name>` on its owner's datasets (the metric's meaning)."""
    return MetricScore.objects.filter(metric=judge.metric_name, response__context__dataset__owner=judge.owner_id)


def judge_conversation_scores(*, judge):
    """Its scores of the owner's conversations: each system turn's (`judge:<name>`) and each whole
    conversation's, one metric per aspect (`judge:<name>@<aspect>`)."""
    owner = judge.owner_id
    whole = ConversationMetricScore.objects.filter(conversation__dataset__owner=owner).filter(
        metric__startswith=f"{judge.metric_name}@"
    )
    turns = TurnMetricScore.objects.filter(metric=judge.metric_name, turn__conversation__dataset__owner=owner)
    return whole, turns


def judge_score_count(*, judge):
    """How many scores removing the judge removes (responses', turns' and whole conversations')."""
    return judge_scores(judge=judge).count() + sum(q.count() for q in judge_conversation_scores(judge=judge))


def judge_usage_totals(*, judge):
    """What its usage records hold, for the confirm page: `{rows, requests, prompt_tokens,
    completion_tokens, cost}` (cost None when the judge has no price)."""
    usage = list(judge.usage.all())
    totals = judge.usage.aggregate(
        requests=Sum("requests"), prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens")
    )
    costs = [row.cost for row in usage if row.cost is not None]
    return {
        "rows": len(usage),
        **{key: value or 0 for key, value in totals.items()},
        "cost": sum(costs) if costs else None,
    }


def judge_delete(*, judge):
    """Remove the judge, its cache, its usage and its scores of the owner's datasets (responses',
    conversation turns' and whole conversations': `judge_conversation_scores`);
    refuse (JudgeBusy, nothing removed) while a metrics run or a judging of pairs uses it.
    Returns the number of scores removed (0 when the judge was removed meanwhile)."""
    with transaction.atomic():
        # Locked (PostgreSQL) against a second removal from another tab.
        judge = Judge.objects.select_for_update().filter(pk=judge.pk).first()
        if judge is None:
            return 0
        # The row lock also waits for a judging being queued (judge_pairs_queue marks it under it).
        busy = judge_metrics_busy(judge=judge) or judge_pairs_queued_busy(judge=judge)
        if busy:
            raise JudgeBusy(busy)
        # Taken without waiting; on PostgreSQL held until the commit, so a judging of pairs that
        # starts meanwhile waits, then finds no judge.
        with judge_pairs_idle(judge) as idle:
            if not idle:
                raise JudgeBusy(_pairs_busy(judge))
            scores, _ = judge_scores(judge=judge).delete()
            scores += sum(query.delete()[0] for query in judge_conversation_scores(judge=judge))
            judge.delete()  # its cache entries and usage rows cascade
    return scores
