"""What the learned evaluators read: responses to score, and rated responses to learn from.

Plain dataclasses, so the engines are fed from the database, the shared data sets or a test
alike. `features` holds the scores a dataset already has for the response (metric name ->
value, None where a metric could not score it); only the stacked kind reads them.
"""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Response:
    context: tuple  # turns, oldest first
    response: str
    reference: str | None = None
    features: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Rated(Response):
    score: float = 0.0
    context_id: str = ""
    system: str = ""
    response_id: object = None


def rated_from(example, features=None):
    """A `Rated` from anything shaped like ADEM's `Example` (context, reference, response, score, ...)."""
    return Rated(
        context=tuple(example.context),
        response=example.response,
        reference=example.reference or None,
        features=dict(features or {}),
        score=float(example.score),
        context_id=str(example.context_id),
        system=str(getattr(example, "system", "") or ""),
        response_id=getattr(example, "response_id", None),
    )
