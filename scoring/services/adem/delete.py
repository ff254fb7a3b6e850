"""Deleting an ADEM model: its row, its training runs, its `adem:<name>` scores, then its checkpoint file.

Kept beside training.py and scoring.py rather than in them: deleting shares nothing with training
but the folder the checkpoints live in.
"""

from pathlib import Path

from django.db import transaction

from annotation.models import Dataset
from scoring.models import AdemModel, MetricRun, MetricScore, TrainingRun
from scoring.services.adem import scoring as services_adem_scoring
from scoring.services.adem import training as services_adem
from scoring.services.adem.refusals import AdemRefusal

OPEN_MODEL = (AdemModel.Status.QUEUED, AdemModel.Status.RUNNING)
OPEN_TRAINING = (TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING)
OPEN_METRICS = (MetricRun.Status.QUEUED, MetricRun.Status.RUNNING)


class AdemModelBusy(AdemRefusal):
    """A job of the model is queued or running: deleting now would pull its rows or file from under it."""


def adem_model_busy(*, model):
    """Why the model cannot be deleted now (a sentence), or "" when nothing of it is queued or running.

    Its own training (the model's status, or a training run of it), or a metrics run on one of the
    owner's datasets that scores `adem:<name>` (the only datasets whose metric names this model).
    """
    training = model.runs.filter(status__in=OPEN_TRAINING).order_by("pk").first()
    if model.status in OPEN_MODEL or training is not None:
        where = f" (run {training.pk})" if training is not None else ""
        return f"ADEM model {model.name} is still being trained{where}: delete it when the training has ended."
    open_runs = MetricRun.objects.filter(dataset__owner=model.owner_id, status__in=OPEN_METRICS).select_related(
        "dataset"
    )
    # Compared in Python: `metrics` is a JSON list, and JSON containment differs between databases.
    scoring = next((run for run in open_runs.order_by("pk") if model.metric_name in run.metrics), None)
    if scoring is not None:
        return (
            f"ADEM model {model.name} is scoring dataset {scoring.dataset.name} (metrics run {scoring.pk}, "
            f"{scoring.status}): delete it when that run has ended."
        )
    return ""


def adem_model_scores(*, model):
    """The model's stored scores: metric `adem:<name>` on its owner's datasets (the metric's meaning)."""
    owned = Dataset.objects.filter(owner=model.owner_id).values("pk")
    return MetricScore.objects.filter(metric=model.metric_name, response__context__dataset__in=owned)


def _checkpoint_to_remove(model):
    """The model's checkpoint file when it lies in the ADEM models folder, where training writes it;
    a path anywhere else (edited by hand) is never unlinked on the row's say-so."""
    if not model.checkpoint_path:
        return None
    folder = (services_adem.adem_root() / "models").resolve()
    path = Path(model.checkpoint_path).resolve()
    return path if path.parent == folder else None


def adem_model_delete(*, model):
    """Delete the model, its training runs and its `adem:<name>` scores; refuse (AdemModelBusy,
    nothing deleted) while a job of it is queued or running. Returns the number of scores removed.

    The rows go in one transaction; the checkpoint file only once it has committed, so a rollback
    never leaves a row pointing at a missing file (an orphan file, at worst, if the process dies
    between the two).
    """
    with transaction.atomic():
        # Locked (PostgreSQL) against a training task marking it running meanwhile, and against a
        # second delete of the same model from another tab.
        model = AdemModel.objects.select_for_update().filter(pk=model.pk).first()
        if model is None:
            return 0
        busy = adem_model_busy(model=model)
        if busy:
            raise AdemModelBusy(busy)
        scores, _ = adem_model_scores(model=model).delete()
        checkpoint, cache_key = _checkpoint_to_remove(model), (model.checkpoint_path, model.checkpoint_sha256)
        model.delete()  # its TrainingRuns cascade

        def remove_checkpoint():
            services_adem_scoring.scorer_forget(key=cache_key)
            if checkpoint is not None:
                checkpoint.unlink(missing_ok=True)

        transaction.on_commit(remove_checkpoint)
    return scores
