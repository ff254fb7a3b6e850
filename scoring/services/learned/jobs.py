"""Queue a learned evaluator's training: refuse now what training would refuse, create the model
row and its run, and queue the task (by name) once they are committed, as ADEM's jobs do."""

from celery import current_app
from django.db import transaction

from scoring.models import AdemModel, TrainingRun
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import adem_owner
from scoring.services.learned.training import DEFAULT_FOLDS, learned_train_check

LEARNED_TRAIN_TASK = "scoring.tasks.learned_train_task"


def learned_train_queue(*, dataset, name, owner, kind, folds=DEFAULT_FOLDS, seed=0, config=None):
    owner = adem_owner(dataset=dataset, owner=owner)
    if AdemModel.objects.filter(owner=owner, name=name).exists():
        raise AdemRefusal(f"you already have a model named {name!r}; choose another name")
    learned_train_check(dataset=dataset, name=name, kind=kind, folds=folds, config=config)
    with transaction.atomic():
        model = AdemModel.objects.create(name=name, owner=owner, dataset=dataset, kind=kind, seed=seed, folds=folds)
        run = TrainingRun.objects.create(
            kind=TrainingRun.Kind.TRAIN_LEARNED,
            owner=owner,
            adem_model=model,
            dataset=dataset,
            params={"name": name, "kind": kind, "seed": seed, "folds": folds, "config": config or {}},
        )
        transaction.on_commit(lambda: current_app.tasks[LEARNED_TRAIN_TASK].delay(run.pk))
    return run
