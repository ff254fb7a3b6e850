"""Scoring's say in deleting a dataset or survey (annotation.services.extensions.deletion_guards): not while
a metrics run computes scores on the dataset's responses or a training run reads its ratings, which
would lose their rows mid-chunk (and a redelivered chunk would then fail on them)."""

from annotation.models import Dataset, Survey
from scoring.models import MetricRun, TrainingRun

OPEN_METRICS = (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING)
OPEN_TRAINING = (TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING)


def scoring_deletion_guard(target):
    """Sentences saying which of the dataset's jobs are queued or running ([] when none)."""
    if isinstance(target, Survey):
        dataset_id = target.dataset_id
    elif isinstance(target, Dataset):
        dataset_id = target.pk
    else:
        return []
    reasons = []
    for run in MetricRun.objects.filter(dataset_id=dataset_id, status__in=OPEN_METRICS).order_by("pk"):
        reasons.append(f"Metrics run {run.pk} on its dataset is {run.status}: delete it when that run has ended.")
    for run in TrainingRun.objects.filter(dataset_id=dataset_id, status__in=OPEN_TRAINING).order_by("pk"):
        reasons.append(
            f"Training run {run.pk} ({run.get_kind_display()}) reads its dataset and is {run.status}: "
            "delete it when that run has ended."
        )
    return reasons
