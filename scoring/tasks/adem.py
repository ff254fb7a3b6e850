"""Celery tasks of ADEM: training, VHRED pre-training and experiments; progress lives on the TrainingRun row."""

from celery import current_task, shared_task

from config.runtime.background import EmbeddedInBackground
from config.runtime.heartbeat import heartbeat, process_identity
from scoring.models import TrainingRun
from scoring.services import liveness
from scoring.services.adem import training as services_adem
from scoring.services.adem import vhred as services_vhred
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.learned import training as services_learned
from scoring.tasks.options import SURVIVES_LOST_WORKER


def _training_run(run_id):
    """The run, counted as started once more; None if it is not to run (done, failed, held by a
    live task, or lost too often). A message Celery redelivered after its worker was lost takes
    over from the process that held the run once that process has ended (see liveness)."""
    run = TrainingRun.objects.select_related("dataset", "owner").filter(pk=run_id).first()
    if run is None:
        return None
    request = current_task.request if current_task else None
    redelivered = bool(((request and request.delivery_info) or {}).get("redelivered"))
    if not liveness.training_run_begin(run=run, holder=process_identity(), redelivered=redelivered):
        return None
    return run


def _training_heartbeat(run):
    return heartbeat(TrainingRun.objects.filter(pk=run.pk))


@shared_task(name="scoring.tasks.adem_train_task", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def adem_train_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    with _training_heartbeat(run):
        services_adem.adem_train_from_run(run=run)


@shared_task(name="scoring.tasks.learned_train_task", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def learned_train_task(run_id):
    """A learned evaluator's training (issue 41), run and recovered exactly as ADEM's."""
    run = _training_run(run_id)
    if run is None:
        return
    with _training_heartbeat(run):
        services_learned.learned_train_from_run(run=run)


@shared_task(name="scoring.tasks.vhred_pretrain_task", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def vhred_pretrain_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    params = run.params
    try:
        with _training_heartbeat(run):
            services_vhred.vhred_pretrain(
                corpus=params.get("corpus_path"), epochs=params["epochs"], resume=params["resume"], run=run
            )
    except AdemRefusal as error:
        TrainingRun.objects.filter(pk=run_id).update(status=TrainingRun.Status.FAILED, error=str(error))


@shared_task(name="scoring.tasks.adem_experiment_task", base=EmbeddedInBackground, **SURVIVES_LOST_WORKER)
def adem_experiment_task(run_id):
    run = _training_run(run_id)
    if run is None:
        return
    params = run.params
    try:
        with _training_heartbeat(run):
            services_adem.adem_experiment(
                dataset=run.dataset,
                kind=params["experiment"],
                encoder=params["encoder"],
                # Runs queued before precision existed carry none: they were float32.
                precision=params.get("precision", "standard"),
                variant=params["variant"],
                seed=params["seed"],
                folds=params["folds"],
                run=run,
            )
    except AdemRefusal as error:
        TrainingRun.objects.filter(pk=run_id).update(status=TrainingRun.Status.FAILED, error=str(error))
