"""Writes, one module per area; the public service functions are re-exported here.

The re-exports are lazy (PEP 562 `__getattr__`): importing `annotation.services` or one of its
pure subpackages (`services.text`, `services.runtime.lazy_import`, `services.chat_systems.demo_bot`)
loads no service module. The models import `services.text`, and the services import the models,
the kinds and the crowd providers (which import `services.slots`): eager re-exports here made
`django.setup()` fail with a circular import (models -> services -> kinds.registry -> models).
"""

from importlib import import_module

_HOMES = {
    "HITLayoutError": "annotation.services.hits",
    "NoWorkAvailable": "annotation.services.claims",
    "ReviewError": "annotation.services.reviews",
    "SubmissionRefused": "annotation.services.assignments",
    "SubmitResult": "annotation.services.assignments",
    "SurveyError": "annotation.services.surveys",
    "annotator_exclude": "annotation.services.reviews",
    "annotator_get": "annotation.services.claims",
    "annotator_include": "annotation.services.reviews",
    "assignment_claim": "annotation.services.claims",
    "assignment_items": "annotation.services.assignments",
    "assignment_review": "annotation.services.reviews",
    "assignment_submit": "annotation.services.assignments",
    "assignments_expire": "annotation.services.slots",
    "dataset_import": "annotation.services.imports",
    "demo_load": "annotation.services.demo",
    "hits_generate": "annotation.services.hits",
    "parse_answers": "annotation.services.assignments",
    "ratings_import": "annotation.services.imports",
    "survey_aspect_scales": "annotation.services.aspects",
    "survey_aspects_describe": "annotation.services.aspects",
    "survey_close": "annotation.services.surveys",
    "survey_create": "annotation.services.surveys",
    "survey_estimate": "annotation.services.estimates",
    "survey_estimate_for": "annotation.services.estimates",
    "survey_launch": "annotation.services.surveys",
    "survey_pause": "annotation.services.surveys",
    "survey_reopen": "annotation.services.surveys",
    "survey_reopen_refusal": "annotation.services.surveys",
    "worker_id_valid": "annotation.services.claims",
    "written_response_review": "annotation.services.reviews",
    "written_unconfirmed": "annotation.services.reviews",
}

__all__ = [
    "HITLayoutError",
    "NoWorkAvailable",
    "ReviewError",
    "SubmissionRefused",
    "SubmitResult",
    "SurveyError",
    "annotator_exclude",
    "annotator_get",
    "annotator_include",
    "assignment_claim",
    "assignment_items",
    "assignment_review",
    "assignment_submit",
    "assignments_expire",
    "dataset_import",
    "demo_load",
    "hits_generate",
    "parse_answers",
    "ratings_import",
    "survey_aspect_scales",
    "survey_aspects_describe",
    "survey_close",
    "survey_create",
    "survey_estimate",
    "survey_estimate_for",
    "survey_launch",
    "survey_pause",
    "survey_reopen",
    "survey_reopen_refusal",
    "worker_id_valid",
    "written_response_review",
    "written_unconfirmed",
]


def __getattr__(name):
    """Import a re-exported service on first use and keep it on the package."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
