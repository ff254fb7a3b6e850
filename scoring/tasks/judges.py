"""Celery task of the LLM judges: a dataset's human-judged pairs."""

from celery import shared_task

from annotation.models import Dataset
from config.runtime.background import EmbeddedInBackground
from scoring.models import Judge
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
