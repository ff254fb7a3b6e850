"""Train a learned evaluator (scoring.learned) on a dataset's ratings and register it beside ADEM.

The rated responses are ADEM's (`adem_training_examples`: survey choice, quality exclusions,
at least two systems and ten contexts), taken as the C-ADEM variant takes them, so a context
without a reference is kept: the cross-encoder reads a reference only where there is one. The
folds, the out-of-fold pooling and the refit are `scoring.learned.crossfit`'s. The model row is
an `AdemModel` with the evaluator's `kind`; its scores are the metric `learned:<name>`.
"""

import time

from django.utils import timezone

from annotation.models import Survey
from scoring.learned import kinds
from scoring.learned.crossfit import checked_config, cross_validate
from scoring.learned.data import rated_from
from scoring.models import AdemModel, TrainingRun
from scoring.services.adem import progress as services_adem_progress
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import (
    adem_owner,
    adem_root,
    adem_training_examples,
    check_model_name,
    training_failed,
    training_run_refused,
)
from scoring.services.learned.features import response_features

DEFAULT_FOLDS = 5
LEARNED_KINDS = tuple(k for k in AdemModel.Kind.values if k != AdemModel.Kind.ADEM)
# Results kept on the model row: the per-response predictions stay out (thousands of rows in a JSON column).
KEPT_RESULTS = ("kind", "config", "test", "system_level", "folds", "curves", "curve", "best_epoch", "split", "seconds")


def learned_rated(*, dataset, **example_options):
    """The dataset's rated responses as `Rated` rows, each with the features a stacked model reads."""
    examples = adem_training_examples(dataset=dataset, variant="context", **example_options)
    features = response_features((e.response_id, e.context, e.response) for e in examples)
    return [rated_from(e, features[e.response_id]) for e in examples]


def learned_train_check(*, dataset, name, kind, folds, config=None, **example_options):
    """Everything that can refuse a training before any row is written; returns the rated rows."""
    check_model_name(name)
    if kind not in LEARNED_KINDS:
        raise AdemRefusal(f"unknown evaluator kind {kind!r}; choose one of {', '.join(LEARNED_KINDS)}")
    if config:  # the default settings need no check (and a cross-encoder's would import torch here)
        try:
            checked_config(kind, config)
        except ValueError as error:
            raise AdemRefusal(str(error)) from error
    rated = learned_rated(dataset=dataset, **example_options)
    if not 2 <= folds <= len({r.context_id for r in rated}):
        raise AdemRefusal(f"--folds must be between 2 and the number of rated contexts, not {folds}")
    return rated


def learned_train(
    *,
    dataset,
    name,
    kind,
    folds=DEFAULT_FOLDS,
    seed=0,
    owner=None,
    config=None,
    run=None,
    progress=None,
    aspect="overall",
    apply_exclusions=True,
):
    """Cross-validate and refit a `kind` evaluator, save its checkpoint, register it; the AdemModel.

    `run` (a TrainingRun) receives live progress (one point per epoch of every fit, with its
    fold); `progress(step)` (a crossfit.Step) is called as well.
    """
    owner = adem_owner(dataset=dataset, owner=owner)
    existing = AdemModel.objects.filter(owner=owner, name=name).first()
    if existing is not None and not (run is not None and run.adem_model_id == existing.pk):
        raise AdemRefusal(f"you already have a model named {name!r}; choose another name")
    rated = learned_train_check(
        dataset=dataset,
        name=name,
        kind=kind,
        folds=folds,
        config=config,
        aspect=aspect,
        apply_exclusions=apply_exclusions,
    )
    model = existing or AdemModel(name=name)
    model.owner, model.dataset, model.kind = owner, dataset, kind
    model.variant = AdemModel.Variant.CONTEXT if kind == AdemModel.Kind.STACKED else AdemModel.Variant.FULL
    model.seed, model.folds = seed, folds
    model.training_data = {
        "dataset": dataset.name,
        "surveys": list(Survey.objects.filter(dataset=dataset).order_by("name").values_list("name", flat=True)),
        "aspect": aspect,
        "apply_exclusions": apply_exclusions,
        "responses": len(rated),
        "contexts": len({r.context_id for r in rated}),
        "systems": sorted({r.system for r in rated}),
    }
    model.status = AdemModel.Status.RUNNING
    model.save()
    if run is not None:
        run.adem_model = model
        run.status = TrainingRun.Status.RUNNING
        run.progress = []  # a retried run starts its curve again, as its fits do
        run.save(update_fields=["adem_model", "status", "progress", "updated_at"])
    settings = {**kinds.get(kind).default_config(), **(config or {})}
    report = _run_reporter(run, folds=folds, settings=settings, progress=progress)
    try:
        final, results = cross_validate(kind, rated, folds=folds, seed=seed, config=config, progress=report)
        path = adem_root() / "models" / f"{model.pk}-{name}.ckpt"
        sha = final.save(path, extra={"name": name, "dataset": dataset.name, "kind": kind})
    except Exception as error:
        training_failed(model, run, error)
        raise
    kept = {key: results[key] for key in KEPT_RESULTS if key in results}
    if hasattr(final, "weights"):
        kept["weights"] = final.weights()
    model.config, model.results = results["config"], kept
    model.checkpoint_path, model.checkpoint_sha256 = str(path), sha
    model.status, model.finished_at = AdemModel.Status.READY, timezone.now()
    model.save()
    if run is not None:
        run.status = TrainingRun.Status.DONE
        run.result = {"model": name, "kind": kind, "test": results["test"]}
        run.save(update_fields=["status", "result", "updated_at"])
    return model


def _run_reporter(run, *, folds, settings, progress):
    """A crossfit progress callback: a curve point and a phase per epoch on the run, then `progress`."""
    max_epochs = settings.get("max_epochs") or len(settings.get("penalties") or ()) or None
    patience = settings.get("patience")
    phase = {"step": "training", "epoch": 0, "max_epochs": max_epochs, "patience": patience, "folds": folds}
    if run is not None:
        services_adem_progress.training_run_phase_set(run=run, phase=phase)
    last = [0.0]

    def report(step):
        if run is not None:
            point = {
                "step": len(run.progress) + 1,
                "epoch": step.epoch,
                "fold": step.fold,
                "stage": step.stage,
                "train_loss": step.train_loss,
                "val_pearson": step.val_pearson,
            }
            run.progress = [*run.progress, point]
            # A stacked fit takes milliseconds per step: one write per step, but a phase at most twice a second.
            run.save(update_fields=["progress", "updated_at"])
            now = time.monotonic()
            if now - last[0] >= services_adem_progress.PHASE_EVERY_S:
                last[0] = now
                where = {"epoch": step.epoch, "fold": step.fold, "stage": step.stage, "val_pearson": step.val_pearson}
                services_adem_progress.training_run_phase_set(run=run, phase={**phase, **where})
        if progress is not None:
            progress(step)

    return report


def learned_train_from_run(*, run):
    """The Celery task's body: train what the run's params say; a refusal marks the run failed."""
    params = run.params
    try:
        return learned_train(
            dataset=run.dataset,
            name=params["name"],
            kind=params["kind"],
            folds=params["folds"],
            seed=params["seed"],
            config=params.get("config"),
            owner=run.owner,
            run=run,
        )
    except AdemRefusal as error:
        training_run_refused(run, error)
        return None
