"""ADEM's experiments (leave-one-system-out, data-efficiency) for a learned evaluator kind, recorded
on a TrainingRun of kind "experiment" as ADEM's are, so the experiments page lists them."""

from scoring.learned import experiments
from scoring.models import TrainingRun
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.learned.training import LEARNED_KINDS, learned_rated


def learned_experiment(*, dataset, experiment, kind, seed=0, folds=5, owner=None, config=None):
    if experiment not in experiments.EXPERIMENTS:
        raise AdemRefusal(f"unknown experiment {experiment!r}; choose one of {', '.join(experiments.EXPERIMENTS)}")
    if kind not in LEARNED_KINDS:
        raise AdemRefusal(f"unknown evaluator kind {kind!r}; choose one of {', '.join(LEARNED_KINDS)}")
    rated = learned_rated(dataset=dataset)
    run = TrainingRun.objects.create(
        kind=TrainingRun.Kind.EXPERIMENT,
        owner=owner or dataset.owner,
        dataset=dataset,
        params={"experiment": experiment, "evaluator": kind, "seed": seed, "folds": folds, "config": config or {}},
        status=TrainingRun.Status.RUNNING,
    )
    try:
        result = experiments.run(experiment, kind, rated, seed=seed, folds=folds, config=config)
    except Exception as error:
        run.status, run.error = TrainingRun.Status.FAILED, str(error)
        run.save(update_fields=["status", "error", "updated_at"])
        raise
    run.status, run.result = TrainingRun.Status.DONE, result
    run.save(update_fields=["status", "result", "updated_at"])
    return run
