"""Queue ADEM background work: create the rows, then queue the task once they are committed.

The tasks are queued by name, as every service queues them: the tasks import the services, never
the reverse. ScoringConfig.ready() imports scoring.tasks, so every process that loads the apps knows the names.
"""

from celery import current_app
from django.db import transaction

from annotation.models import Dataset
from scoring.models import AdemModel, TrainingRun
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import adem_owner, adem_train_check

ADEM_TRAIN_TASK = "scoring.tasks.adem_train_task"
ADEM_EXPERIMENT_TASK = "scoring.tasks.adem_experiment_task"
VHRED_PRETRAIN_TASK = "scoring.tasks.vhred_pretrain_task"


def adem_train_queue(
    *,
    dataset,
    name,
    owner,
    encoder="minilm",
    precision=AdemModel.Precision.STANDARD,
    variant="full",
    seed=0,
    folds=None,
):
    """Refuse now what training would refuse (too few or all-excluded ratings, a name the owner
    already uses, no VHRED encoder...), before any row exists: a refused request leaves no Failed
    model behind. Then create the model and its run and queue the training."""
    owner = adem_owner(dataset=dataset, owner=owner)
    if AdemModel.objects.filter(owner=owner, name=name).exists():
        raise AdemRefusal(f"you already have an ADEM model named {name!r}; choose another name")
    adem_train_check(
        dataset=dataset, name=name, owner=owner, encoder=encoder, precision=precision, variant=variant, folds=folds
    )
    with transaction.atomic():
        model = AdemModel.objects.create(
            name=name,
            owner=owner,
            dataset=dataset,
            encoder=encoder,
            precision=precision,
            variant=variant,
            seed=seed,
            folds=folds,
        )
        run = TrainingRun.objects.create(
            kind=TrainingRun.Kind.TRAIN,
            owner=owner,
            adem_model=model,
            dataset=dataset,
            params={
                "name": name,
                "encoder": encoder,
                "precision": precision,
                "variant": variant,
                "seed": seed,
                "folds": folds,
            },
        )
        transaction.on_commit(lambda: current_app.tasks[ADEM_TRAIN_TASK].delay(run.pk))
    return run


class ExperimentRunning(AdemRefusal):
    """The researcher already has this very experiment queued or running: a second press of Run
    (a double submit, another tab) would train the same k-fold models twice for the same table."""

    def __init__(self, run):
        self.run = run
        super().__init__(
            f"This experiment is already {run.get_status_display().lower()} on {run.dataset} with these settings "
            f"(run {run.pk}): nothing new was started. Its results appear here when it ends."
        )


def adem_experiment_queue(*, dataset, owner, experiment, encoder="minilm", variant="full", seed=0, folds=5):
    """Queue an experiment; refuse (ExperimentRunning, creating nothing) while the owner has the same
    one, same dataset and settings, queued or running. Other settings may run side by side."""
    params = {"experiment": experiment, "encoder": encoder, "variant": variant, "seed": seed, "folds": folds}
    with transaction.atomic():
        # The dataset's row stays locked until this transaction commits (PostgreSQL): of two submits
        # at the same moment, the second waits for the first's run and then sees it.
        Dataset.objects.select_for_update().filter(pk=dataset.pk).exists()
        open_runs = TrainingRun.objects.filter(
            kind=TrainingRun.Kind.EXPERIMENT,
            owner=owner,
            dataset=dataset,
            status__in=(TrainingRun.Status.QUEUED, TrainingRun.Status.RUNNING),
        ).order_by("pk")
        # Compared in Python, not by a JSON lookup, whose matching of objects differs between databases.
        same = next((run for run in open_runs if run.params == params), None)
        if same is not None:
            raise ExperimentRunning(same)
        run = TrainingRun.objects.create(kind=TrainingRun.Kind.EXPERIMENT, owner=owner, dataset=dataset, params=params)
        transaction.on_commit(lambda: current_app.tasks[ADEM_EXPERIMENT_TASK].delay(run.pk))
    return run


def vhred_pretrain_queue(*, owner, corpus_path=None, epochs=1, resume=False):
    with transaction.atomic():
        run = TrainingRun.objects.create(
            kind=TrainingRun.Kind.PRETRAIN,
            owner=owner,
            params={"corpus_path": corpus_path, "epochs": epochs, "resume": resume},
        )
        transaction.on_commit(lambda: current_app.tasks[VHRED_PRETRAIN_TASK].delay(run.pk))
    return run
