"""Scoring with a learned evaluator: its loaded model (cached per checkpoint), scores of triples
(the scoring API) and of a dataset's responses (the metric `learned:<name>`).

A stacked model reads the scores a response already has: a dataset's responses bring their
stored metric scores (scoring.services.learned.features), an API caller may send them as
`"features": {metric: value}` beside a triple; lengths are computed here either way, and a
score not given is filled in as in training (the training median, flagged as missing).
"""

from annotation.models import Response
from scoring.adem.checkpoint import CheckpointError, read_header
from scoring.learned import kinds
from scoring.learned.data import Response as LearnedResponse
from scoring.models import AdemModel
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.learned.features import length_features, response_features

_EVALUATORS = {}


def learned_evaluator(*, model):
    """The loaded evaluator of a ready learned model (cached per checkpoint hash)."""
    if model.status != AdemModel.Status.READY:
        raise AdemRefusal(f"model {model.name!r} is not ready (status: {model.status})")
    key = (model.checkpoint_path, model.checkpoint_sha256)
    if key not in _EVALUATORS:
        try:
            sha = read_header(model.checkpoint_path)["sha256"]
            if model.checkpoint_sha256 and sha != model.checkpoint_sha256:
                raise AdemRefusal(f"the checkpoint of {model.name!r} was replaced since training; retrain the model")
            _EVALUATORS[key] = kinds.get(model.kind).load(model.checkpoint_path)
        except CheckpointError as error:
            raise AdemRefusal(f"the checkpoint of model {model.name!r} cannot be used: {error}") from error
    return _EVALUATORS[key]


def evaluator_forget(*, key):
    _EVALUATORS.pop(tuple(key), None)


def learned_score(*, model, triples, features=None):
    """Scores (floats) of normalised (context turns, reference, response) triples; `features`: one
    dict of given metric scores per triple (stacked), or None."""
    features = features or [{} for _ in triples]
    responses = [
        LearnedResponse(
            context=tuple(context),
            response=response,
            reference=reference or None,
            features={**given, **length_features(context, response)},
        )
        for (context, reference, response), given in zip(triples, features, strict=True)
    ]
    if not responses:
        return []
    return [float(s) for s in learned_evaluator(model=model).predict(responses)]


def given_features(index, item):
    """The `features` an API triple carries ({metric: number or null}), or a refusal naming it."""
    given = item.get("features", {}) if isinstance(item, dict) else {}
    if not isinstance(given, dict) or not all(
        isinstance(k, str) and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))
        for k, v in given.items()
    ):
        raise AdemRefusal(f"triple {index}: features must map metric names to numbers", field="features", index=index)
    return given


def learned_metric_values(*, model, response_ids):
    """`{response_id: score}` of the metric `learned:<name>` for these responses (every one is scored)."""
    responses = list(
        Response.objects.filter(pk__in=list(response_ids))
        .select_related("context")
        .prefetch_related("context__references")
        .order_by("pk")
    )
    rows = []
    for response in responses:
        turns = [t.get("text", "") if isinstance(t, dict) else str(t) for t in response.context.turns]
        references = list(response.context.references.all())
        rows.append((response.pk, turns, references[0].text if references else None, response.text))
    if not rows:
        return {}
    stored = response_features((pk, turns, text) for pk, turns, _, text in rows)
    evaluator = learned_evaluator(model=model)
    scores = evaluator.predict(
        [
            LearnedResponse(context=tuple(turns), response=text, reference=reference, features=stored[pk])
            for pk, turns, reference, text in rows
        ]
    )
    return {pk: float(score) for (pk, _, _, _), score in zip(rows, scores, strict=True)}
