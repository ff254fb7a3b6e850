"""ADEM writes: train and register a model, run experiments; the paths and encoders they share
with scoring (scoring.services.adem.scoring: model lookup, scoring triples, the `adem:` metric).

The pure work happens in scoring.adem; these functions gather human scores through
`annotation.selectors.human_scores` (so survey choice and exclusions apply as everywhere
else), pick files under settings.RATELAB_DATA_DIR, and record rows.
"""

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from annotation.models import Response, Survey
from annotation.selectors import human_scores
from scoring import adem
from scoring.adem.cache import VectorCache
from scoring.adem.choices import KINDS, VARIANTS
from scoring.adem.encoders import ENCODERS, get_encoder
from scoring.models import AdemModel, TrainingRun
from scoring.models.adem import model_name_validator
from scoring.services.adem import progress as services_adem_progress
from scoring.services.adem import vhred_store
from scoring.services.adem.refusals import AdemRefusal

MIN_RATED_RESPONSES = 30
MIN_CONTEXTS = 10


# --- paths ---------------------------------------------------------------------------------


def adem_root():
    return Path(settings.RATELAB_DATA_DIR) / "adem"


def vector_cache():
    return VectorCache(adem_root() / "vectors.sqlite")


def onnx_export_dir():
    return adem_root() / "onnx"


# AdemModel.Precision → the MiniLM encoder's precision ("auto": float32, or bfloat16 where native).
ENCODER_PRECISIONS = {AdemModel.Precision.STANDARD: "auto", AdemModel.Precision.INT8: "int8"}


def encoder_check(*, encoder, precision=AdemModel.Precision.STANDARD):
    """Refuse an unknown encoder or precision, or a precision the encoder does not offer."""
    if encoder not in ENCODERS:
        raise AdemRefusal(f"unknown encoder {encoder!r}; choose one of {', '.join(ENCODERS)}")
    if precision not in ENCODER_PRECISIONS:
        raise AdemRefusal(f"unknown precision {precision!r}; choose one of {', '.join(ENCODER_PRECISIONS)}")
    if precision != AdemModel.Precision.STANDARD and encoder != "minilm":
        raise AdemRefusal(f"{precision} precision is offered for the minilm encoder only, not {encoder}")


def encoder_load(name, precision=AdemModel.Precision.STANDARD, *, vhred_checkpoint=None):
    """The named encoder; vhred reads the given pre-trained checkpoint (see scoring.services.adem.vhred_store).

    `precision` (an AdemModel.Precision) other than standard is offered for minilm only.
    """
    encoder_check(encoder=name, precision=precision)
    if name == "vhred" and vhred_checkpoint is None:
        raise AdemRefusal("the vhred encoder needs a pre-trained VHRED checkpoint: run `manage.py pretrain_vhred`")
    return get_encoder(
        name,
        vhred_checkpoint=vhred_checkpoint if name == "vhred" else None,
        precision=ENCODER_PRECISIONS[precision],
        export_dir=onnx_export_dir(),
    )


# --- training data -------------------------------------------------------------------------


def adem_training_examples(*, dataset, surveys=None, aspect="overall", apply_exclusions=True, variant="full"):
    """Rated responses of the dataset as ADEM examples, or an AdemRefusal saying what is missing."""
    scores = human_scores(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    if not scores and apply_exclusions:
        every = human_scores(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=False)
        n_ratings = sum(count for _, count in every.values())
        if n_ratings:
            raise AdemRefusal(
                f"all {n_ratings} ratings of {dataset.name} (aspect {aspect!r}) were excluded by the quality "
                "rules — see Quality: accept annotators there, or train without exclusions"
            )
    if len(scores) < MIN_RATED_RESPONSES:
        raise AdemRefusal(
            f"too few ratings: {len(scores)} rated responses in {dataset.name} (aspect {aspect!r}); "
            f"ADEM needs at least {MIN_RATED_RESPONSES}"
        )
    responses = (
        Response.objects.filter(pk__in=scores.keys())
        .select_related("context", "system")
        .prefetch_related("context__references")
        .order_by("context__position", "system__name")
    )
    examples, unreferenced = [], []
    for response in responses:
        references = list(response.context.references.all())
        if not references and variant != "context":
            unreferenced.append(response.context.external_id)
            continue
        examples.append(
            adem.pipeline.Example(
                context=[
                    turn.get("text", "") if isinstance(turn, dict) else str(turn) for turn in response.context.turns
                ],
                reference=references[0].text if references else "",
                response=response.text,
                score=float(scores[response.pk][0]),
                context_id=response.context.external_id,
                system=response.system.name,
                response_id=response.pk,
            )
        )
    if unreferenced:
        shown = ", ".join(sorted(set(unreferenced))[:5])
        raise AdemRefusal(
            f"{len(unreferenced)} rated responses have no reference (contexts {shown}…); "
            "ADEM and R-ADEM compare the response to a reference: add references or use --variant context"
        )
    systems = {e.system for e in examples}
    if len(systems) < 2:
        raise AdemRefusal(
            f"the ratings cover a single system ({', '.join(systems)}); ADEM must learn to tell systems' "
            "responses apart: rate responses of at least two systems"
        )
    contexts = {e.context_id for e in examples}
    if len(contexts) < MIN_CONTEXTS:
        raise AdemRefusal(
            f"too few rated contexts: {len(contexts)}; splitting by context needs at least {MIN_CONTEXTS}"
        )
    return examples


# --- training ------------------------------------------------------------------------------


def check_model_name(name):
    try:
        model_name_validator(name)
    except ValidationError as error:
        raise AdemRefusal(f"model name {name!r}: {' '.join(error.messages)}") from error


def adem_owner(*, dataset, owner=None):
    """Who owns a model about to be trained: the given user, else the dataset's owner."""
    owner = owner if owner is not None else dataset.owner
    if owner is None:
        raise AdemRefusal(
            f"an ADEM model needs an owner and dataset {dataset.name} has none: name one (--owner USERNAME)"
        )
    return owner


def adem_train_check(*, dataset, name, owner, encoder, precision, variant, folds=None, **example_options):
    """Everything that can refuse a training before any row is written; returns the examples."""
    check_model_name(name)
    encoder_check(encoder=encoder, precision=precision)
    if variant not in VARIANTS:
        raise AdemRefusal(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    examples = adem_training_examples(dataset=dataset, variant=variant, **example_options)
    if folds is not None and not 2 <= folds <= len({e.context_id for e in examples}):
        raise AdemRefusal(f"--folds must be between 2 and the number of rated contexts, not {folds}")
    if encoder == "vhred":
        vhred_store.current_path(owner=owner)  # refuses when there is no pre-trained encoder
    return examples


def adem_train(
    *,
    dataset,
    name,
    encoder="minilm",
    precision=AdemModel.Precision.STANDARD,
    variant="full",
    seed=0,
    folds=None,
    surveys=None,
    aspect="overall",
    apply_exclusions=True,
    owner=None,
    config=None,
    run=None,
    progress=None,
):
    """Train ADEM on the dataset's human scores, save its checkpoint, register it. Returns the AdemModel.

    `run` (a TrainingRun) receives live progress; `progress(epoch, train_loss, val_pearson)`
    is called as well (the command prints with it). The model belongs to `owner` (default: the
    dataset's owner); a name the owner already uses is refused unless it is the queued row this
    run was created for. Names are unique per owner only, so a refusal reveals nothing of others'.
    """
    owner = adem_owner(dataset=dataset, owner=owner)
    existing = AdemModel.objects.filter(owner=owner, name=name).first()
    if existing is not None and not (run is not None and run.adem_model_id == existing.pk):
        raise AdemRefusal(f"you already have an ADEM model named {name!r}; choose another name")
    examples = adem_train_check(
        dataset=dataset,
        name=name,
        owner=owner,
        encoder=encoder,
        precision=precision,
        variant=variant,
        folds=folds,
        surveys=surveys,
        aspect=aspect,
        apply_exclusions=apply_exclusions,
    )
    vhred_sha, vhred_path = vhred_store.current_path(owner=owner) if encoder == "vhred" else ("", None)
    text_encoder = encoder_load(encoder, precision, vhred_checkpoint=vhred_path)
    train_config = adem.training.TrainConfig.from_dict({**(config or {}), "variant": variant})
    survey_list = list(surveys) if surveys is not None else list(Survey.objects.filter(dataset=dataset))
    model = existing or AdemModel(name=name)
    model.owner = owner
    model.vhred_sha256 = vhred_sha  # recorded before training: the checkpoint is kept while the model uses it
    model.dataset = dataset
    model.encoder, model.precision = encoder, precision
    model.variant, model.seed, model.folds = variant, seed, folds
    model.training_data = {
        "dataset": dataset.name,
        "surveys": [s.name for s in survey_list],
        "aspect": aspect,
        "apply_exclusions": apply_exclusions,
        "responses": len(examples),
        "contexts": len({e.context_id for e in examples}),
        "systems": sorted({e.system for e in examples}),
    }
    model.status = AdemModel.Status.RUNNING
    model.save()
    if run is not None:
        run.adem_model = model
        run.status = TrainingRun.Status.RUNNING
        run.save(update_fields=["adem_model", "status", "updated_at"])

    epoch_phase = None

    def report(epoch, train_loss, val_pearson):
        if run is not None:
            run.progress = [*run.progress, {"epoch": epoch, "train_loss": train_loss, "val_pearson": val_pearson}]
            run.save(update_fields=["progress", "updated_at"])
            epoch_phase(epoch)
        if progress is not None:
            progress(epoch, train_loss, val_pearson)

    try:
        vectors = _encode_with_phase(examples, text_encoder, run=run)
        if run is not None:
            epoch_phase = services_adem_progress.training_progress(
                run=run, max_epochs=train_config.max_epochs, patience=train_config.patience, folds=folds
            )
        scorer, results = adem.pipeline.train_and_evaluate(
            examples, vectors, train_config, seed=seed, encoder=(encoder, text_encoder.id), folds=folds, progress=report
        )
        # One file per model row: two owners may both have a model named "demo".
        path = adem_root() / "models" / f"{model.pk}-{name}.ckpt"
        sha = scorer.save(path, extra={"name": name, "dataset": dataset.name})
    except Exception as error:
        training_failed(model, run, error)
        raise
    model.config = train_config.as_dict()
    model.results = results
    model.checkpoint_path = str(path)
    model.checkpoint_sha256 = sha
    model.status = AdemModel.Status.READY
    model.finished_at = timezone.now()
    model.save()
    if run is not None:
        run.status = TrainingRun.Status.DONE
        run.result = {"model": name, "test": results["test"]}
        run.save(update_fields=["status", "result", "updated_at"])
    return model


def _encode_with_phase(examples, text_encoder, *, run):
    """The examples' vectors; a run's page follows the encoding (scoring.services.adem.progress)."""
    progress = None
    if run is not None:
        services_adem_progress.encoding_started(run=run, responses=len(examples))
        progress = services_adem_progress.encoding_progress(run=run, responses=len(examples))
    cache = vector_cache()
    try:
        return adem.pipeline.encode_examples(examples, text_encoder, cache=cache, progress=progress)
    finally:
        cache.close()


def training_failed(model, run, error):
    """Training `model` failed with `error`: the model, and its run when there is one, say so."""
    model.status, model.error = AdemModel.Status.FAILED, str(error)
    model.save(update_fields=["status", "error"])
    if run is not None:
        run.status, run.error = TrainingRun.Status.FAILED, str(error)
        run.save(update_fields=["status", "error", "updated_at"])


def training_run_refused(run, error):
    """A queued run's training was refused: the run failed, and its model too while still queued."""
    run.status, run.error = TrainingRun.Status.FAILED, str(error)
    run.save(update_fields=["status", "error", "updated_at"])
    AdemModel.objects.filter(pk=run.adem_model_id, status=AdemModel.Status.QUEUED).update(
        status=AdemModel.Status.FAILED, error=str(error)
    )


def adem_train_from_run(*, run):
    """The Celery task's body: train what the run's params say; a refusal marks the run failed."""
    params = run.params
    try:
        return adem_train(
            dataset=run.dataset,
            name=params["name"],
            encoder=params["encoder"],
            precision=params.get("precision", AdemModel.Precision.STANDARD),
            variant=params["variant"],
            seed=params["seed"],
            folds=params.get("folds"),
            owner=run.owner,
            run=run,
        )
    except AdemRefusal as error:
        training_run_refused(run, error)
        return None


# --- experiments ---------------------------------------------------------------------------


def adem_experiment(
    *,
    dataset,
    kind,
    encoder="minilm",
    precision=AdemModel.Precision.STANDARD,
    variant="full",
    seed=0,
    folds=5,
    owner=None,
    run=None,
):
    """Leave-one-system-out or data-efficiency results (dict), recorded on a TrainingRun."""
    if kind not in KINDS:
        raise AdemRefusal(f"unknown experiment {kind!r}; choose one of {', '.join(KINDS)}")
    encoder_check(encoder=encoder, precision=precision)
    examples = adem_training_examples(dataset=dataset, variant=variant)
    vhred = vhred_store.current_path(owner=owner or (run.owner if run else None))[1] if encoder == "vhred" else None
    text_encoder = encoder_load(encoder, precision, vhred_checkpoint=vhred)
    if run is None:
        run = TrainingRun.objects.create(
            kind=TrainingRun.Kind.EXPERIMENT,
            owner=owner,
            dataset=dataset,
            params={
                "experiment": kind,
                "encoder": encoder,
                "precision": precision,
                "variant": variant,
                "seed": seed,
                "folds": folds,
            },
        )
    run.status = TrainingRun.Status.RUNNING
    run.save(update_fields=["status", "updated_at"])
    try:
        vectors = _encode_with_phase(examples, text_encoder, run=run)
        services_adem_progress.training_run_phase_set(run=run, phase={"step": "fitting"})
        result = adem.experiments.run(
            kind,
            examples,
            vectors,
            adem.training.TrainConfig(variant=variant),
            seed=seed,
            folds=folds,
            encoder=(encoder, text_encoder.id),
        )
    except Exception as error:
        run.status, run.error = TrainingRun.Status.FAILED, str(error)
        run.save(update_fields=["status", "error", "updated_at"])
        raise
    run.status, run.result = TrainingRun.Status.DONE, result
    run.save(update_fields=["status", "result", "updated_at"])
    return run
