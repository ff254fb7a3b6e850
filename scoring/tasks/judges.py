"""Celery tasks of the LLM judges: a dataset's human-judged pairs, a dataset's conversations."""

from celery import shared_task

from annotation.models import Dataset
from config.runtime.background import EmbeddedInBackground
from scoring.models import Judge
from scoring.services.judges import conversations as services_judges_conversations
from scoring.services.judges import pairwise as services_judges_pairwise
from scoring.tasks.options import SURVIVES_LOST_WORKER


@shared_task(
    name="scoring.tasks.judge_dataset_pairs", base=EmbeddedInBackground, ignore_result=True, **SURVIVES_LOST_WORKER
)
def judge_dataset_pairs(judge_id, dataset_id):
    """Judge a dataset's human-judged pairs in both orders; the answers land in the judge cache,
    so a rerun (or a re-delivery after a lost worker) asks only for what is still missing."""
    judge = Judge.objects.filter(pk=judge_id).first()
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if judge is None or dataset is None:  # removed since it was queued
        return None
    return services_judges_pairwise.judge_dataset_pairs(judge=judge, dataset=dataset)


@shared_task(
    name="scoring.tasks.judge_dataset_conversations",
    base=EmbeddedInBackground,
    ignore_result=True,
    **SURVIVES_LOST_WORKER,
)
def judge_dataset_conversations(judge_id, dataset_id, level):
    """Judge a dataset's conversations (each turn, each whole conversation, or both); every answer is
    cached as it arrives, so a rerun (or a re-delivery after a lost worker) asks only what is missing."""
    judge = Judge.objects.filter(pk=judge_id).first()
    dataset = Dataset.objects.filter(pk=dataset_id).first()
    if judge is None or dataset is None:  # removed since it was queued
        return None
    return services_judges_conversations.judge_dataset_conversations(judge=judge, dataset=dataset, level=level)
