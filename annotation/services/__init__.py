"""Writes, one module per area; the public service functions are re-exported here."""

from annotation.services.aspects import survey_aspect_scales, survey_aspects_describe
from annotation.services.assignments import (
    SubmissionRefused,
    SubmitResult,
    assignment_items,
    assignment_submit,
    parse_answers,
)
from annotation.services.claims import NoWorkAvailable, annotator_get, assignment_claim, worker_id_valid
from annotation.services.demo import demo_load
from annotation.services.estimates import survey_estimate, survey_estimate_for
from annotation.services.hits import HITLayoutError, hits_generate
from annotation.services.imports import dataset_import, ratings_import
from annotation.services.reviews import (
    ReviewError,
    annotator_exclude,
    annotator_include,
    assignment_review,
    written_response_review,
    written_unconfirmed,
)
from annotation.services.surveys import (
    SurveyError,
    survey_close,
    survey_create,
    survey_launch,
    survey_pause,
    survey_reopen,
    survey_reopen_refusal,
)
from annotation.slots import assignments_expire

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
