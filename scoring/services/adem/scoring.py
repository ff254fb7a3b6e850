"""ADEM scoring: find a registered model, load its scorer (cached per checkpoint), score triples,
and the metric hooks through which `adem:<name>` is computed like any other metric.

Training, experiments, paths and encoders live in scoring.services.adem.training.
"""

from annotation.models import Response
from scoring import adem
from scoring.adem.checkpoint import CheckpointError, read_header
from scoring.models import AdemModel
from scoring.models.adem import ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX, metric_name_of
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.training import encoder_load, vector_cache, vhred_store
from scoring.services.learned import scoring as services_learned_scoring

_SCORERS = {}


def adem_model_named(name, *, owner=None):
    """The model called `name`: the owner's, or, without an owner, the only one of that name."""
    found = AdemModel.objects.filter(name=name)
    if owner is not None:
        found = found.filter(owner=owner)
    found = list(found[:2])
    if not found:
        raise AdemRefusal(f"no ADEM model named {name!r}" + (f" owned by {owner}" if owner is not None else ""))
    if len(found) > 1:
        raise AdemRefusal(f"several researchers have an ADEM model named {name!r}: say whose (--owner USERNAME)")
    return found[0]


def _model_row(model):
    """An AdemModel given as a row or by name (a name must be unambiguous)."""
    return adem_model_named(model) if isinstance(model, str) else model


def adem_scorer(*, model):
    """The loaded Scorer of a registered model (cached per checkpoint hash)."""
    model = _model_row(model)
    if model.status != AdemModel.Status.READY:
        raise AdemRefusal(f"ADEM model {model.name!r} is not ready (status: {model.status})")
    key = (model.checkpoint_path, model.checkpoint_sha256)
    if key not in _SCORERS:
        try:
            scorer = adem.pipeline.Scorer.load(model.checkpoint_path)  # verifies the payload against its header
            sha = read_header(model.checkpoint_path)["sha256"]
        except CheckpointError as error:
            raise AdemRefusal(f"the checkpoint of ADEM model {model.name!r} cannot be used: {error}") from error
        if model.checkpoint_sha256 and sha != model.checkpoint_sha256:
            raise AdemRefusal(f"the checkpoint of {model.name!r} was replaced since training; retrain the model")
        _SCORERS[key] = scorer
    return _SCORERS[key]


def scorer_forget(*, key):
    """Drop a loaded Scorer (key: checkpoint path and sha256) whose model was deleted."""
    _SCORERS.pop(tuple(key), None)


def _blank(text):
    return not text.strip()


def _check_filled(model, index, context, reference, response):
    """Refuse what ADEM would score as if it were text: an empty response, context or needed reference."""
    if _blank(response):
        raise AdemRefusal(f"triple {index}: the response is empty", field="response", index=index)
    if model.is_learned:  # a learned evaluator reads a reference where there is one, and needs none
        return
    if model.variant != AdemModel.Variant.REFERENCE and all(_blank(turn) for turn in context):
        raise AdemRefusal(f"triple {index}: the context is empty", field="context", index=index)
    if model.variant != AdemModel.Variant.CONTEXT and _blank(reference):
        raise AdemRefusal(
            f"triple {index}: the reference is empty and model {model.name!r} ({model.get_variant_display()}) "
            "compares the response to it",
            field="reference",
            index=index,
        )


def adem_score(*, model, triples, require_text=True):
    """Scores (list of floats) for triples of (context turns or text, reference, response).

    With `require_text` (callers' triples: the API, the command) an empty response or context, or an
    empty reference where the variant reads one, is refused naming the field; the dataset's own
    responses (`adem_metric_values`) are scored as they are.
    """
    model = _model_row(model)
    scorer = None if model.is_learned else adem_scorer(model=model)
    normalised, features = [], []
    for index, item in enumerate(triples):
        try:
            context, reference, response = (
                (item["context"], item["reference"], item["response"]) if isinstance(item, dict) else item
            )
        except KeyError as error:
            raise AdemRefusal(f"triple {index}: missing field {error.args[0]!r}") from error
        except (TypeError, ValueError) as error:
            raise AdemRefusal(f"triple {index}: expected context, reference and response") from error
        if not isinstance(context, (str, list)):
            raise AdemRefusal(f"triple {index}: context must be a list of turns or a text")
        if isinstance(context, str):
            context = [line for line in context.split("\n") if line.strip()] or [context]
        if not all(isinstance(x, str) for x in [*context, reference, response]):
            raise AdemRefusal(f"triple {index}: context turns, reference and response must be strings")
        if require_text:
            _check_filled(model, index, context, reference, response)
        normalised.append((list(context), reference, response))
        if model.is_learned:
            features.append(services_learned_scoring.given_features(index, item))
    if model.is_learned:
        return services_learned_scoring.learned_score(model=model, triples=normalised, features=features)
    vhred = vhred_store.model_checkpoint(model) if scorer.encoder_name == "vhred" else None
    text_encoder = encoder_load(scorer.encoder_name, model.precision, vhred_checkpoint=vhred)
    cache = vector_cache()
    try:
        scores = scorer.score(normalised, text_encoder, cache=cache)
    finally:
        cache.close()
    return [float(s) for s in scores]


# Metric `adem:<name>` (or `learned:<name>`, a learned evaluator of the same registry) on a dataset
# means the model of that name owned by the dataset's owner:
# names are unique per owner, and one researcher's models never appear among another's metrics.


MODEL_METRIC_PREFIXES = (ADEM_METRIC_PREFIX, LEARNED_METRIC_PREFIX)


def is_model_metric(name):
    """A metric scored by a model of the registry: `adem:<name>` or `learned:<name>`."""
    return name.startswith(MODEL_METRIC_PREFIXES)


def adem_metric_names(*, owner):
    """Metric names of the owner's ready models (`adem:<name>`, `learned:<name>`), for the metric listing."""
    if owner is None:
        return []
    rows = AdemModel.objects.filter(owner=owner, status=AdemModel.Status.READY).values_list("kind", "name")
    return sorted(metric_name_of(kind, name) for kind, name in rows)


def adem_metric_version(*, metric, owner):
    """The version of metric `adem:<name>`: its checkpoint's sha256 prefix, so a retrained model
    under the same name is recomputed, never mixed."""
    return _metric_model(metric, owner).checkpoint_sha256[:12]


def metric_model_name(metric):
    """The model name in a metric `adem:<name>` or `learned:<name>`."""
    for prefix in MODEL_METRIC_PREFIXES:
        if metric.startswith(prefix):
            return metric.removeprefix(prefix)
    return metric


def _metric_model(metric, owner):
    name = metric_model_name(metric)
    model = AdemModel.objects.filter(owner=owner, name=name, status=AdemModel.Status.READY).first()
    if model is None or model.metric_name != metric:
        raise AdemRefusal(f"no trained model named {name!r} (metric {metric})")
    return model


def adem_metric_values(*, metric, response_ids, owner):
    """`{response_id: score or None}` of metric `adem:<name>` (the owner's model) for these responses.

    The hook through which `scoring.services` computes `adem:<name>` like any other metric.
    Responses of contexts without a reference get None for the variants that need one.
    """
    model = _metric_model(metric, owner)
    if model.is_learned:
        return services_learned_scoring.learned_metric_values(model=model, response_ids=response_ids)
    responses = (
        Response.objects.filter(pk__in=list(response_ids))
        .select_related("context")
        .prefetch_related("context__references")
    )
    triples, scorable, everyone = [], [], []
    for response in responses:
        everyone.append(response.pk)
        references = list(response.context.references.all())
        if references or model.variant == AdemModel.Variant.CONTEXT:
            turns = [t.get("text", "") if isinstance(t, dict) else str(t) for t in response.context.turns]
            triples.append((turns, references[0].text if references else "", response.text))
            scorable.append(response.pk)
    scored = adem_score(model=model, triples=triples, require_text=False) if triples else []
    values = dict(zip(scorable, scored, strict=True))
    return {pk: values.get(pk) for pk in everyone}
