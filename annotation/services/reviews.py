"""A researcher's decisions about submitted work, each kept in the ReviewAction audit trail."""

from django.db import IntegrityError, transaction

from annotation.crowd import get_provider
from annotation.crowd.base import ProviderError
from annotation.models import Assignment, Response, ReviewAction, System, WrittenResponse
from annotation.quality.data import excluded_annotators
from annotation.quality.selectors import unconfirmed_platform_work
from annotation.quality.services import exclusion_override


class ReviewError(Exception):
    """A review decision was refused; the message is safe to show a researcher."""


def _reason(reason, required):
    reason = (reason or "").strip()
    if required and not reason:
        raise ReviewError("Please give a reason; it is kept in the audit trail.")
    return reason


@transaction.atomic
def assignment_review(*, assignment, action, actor, reason=""):
    """Approve or reject a submitted assignment (through its crowd provider)."""
    assignment = Assignment.objects.select_for_update().select_related("hit__survey").get(pk=assignment.pk)
    survey = assignment.hit.survey
    if action not in (ReviewAction.Action.APPROVE, ReviewAction.Action.REJECT):
        raise ReviewError(f"Unknown review action {action!r}.")
    if assignment.status not in Assignment.FINISHED:
        raise ReviewError("Only submitted work can be approved or rejected.")
    reason = _reason(reason, required=action == ReviewAction.Action.REJECT)
    provider = get_provider(survey)
    try:
        if action == ReviewAction.Action.APPROVE:
            provider.approve(assignment=assignment, feedback=reason)
        else:
            provider.reject(assignment=assignment, reason=reason)
    except ProviderError as error:
        # E.g. MTurk does not confirm the assignment: nothing was decided, and the page says why.
        raise ReviewError(str(error)) from None
    return ReviewAction.objects.create(
        survey=survey,
        annotator_id=assignment.annotator_id,
        assignment=assignment,
        action=action,
        reason=reason,
        actor=actor,
    )


@transaction.atomic
def annotator_exclude(*, survey, annotator, actor, reason):
    """Leave all of an annotator's ratings in this survey out of every downstream number.

    The decision is a manual override in quality control (which every human score reads) and
    an entry in the review audit trail.
    """
    reason = _reason(reason, required=True)
    exclusion_override(survey=survey, annotator=annotator, excluded=True, note=reason, user=actor)
    return ReviewAction.objects.create(
        survey=survey, annotator=annotator, action=ReviewAction.Action.EXCLUDE, reason=reason, actor=actor
    )


@transaction.atomic
def annotator_include(*, survey, annotator, actor, reason):
    """Count an annotator's ratings again, whatever the automatic rules say (audit trail kept)."""
    reason = _reason(reason, required=True)
    exclusion_override(survey=survey, annotator=annotator, excluded=False, note=reason, user=actor)
    return ReviewAction.objects.create(
        survey=survey, annotator=annotator, action=ReviewAction.Action.INCLUDE, reason=reason, actor=actor
    )


def annotators_excluded(*, survey):
    """Ids of the survey's annotators whose ratings do not count (automatic rules or overrides)."""
    return excluded_annotators(surveys=[survey]).get(survey.pk, set())


def written_unconfirmed():
    """Written replies whose crowd platform has not confirmed the work (see unconfirmed_platform_work)."""
    return WrittenResponse.objects.filter(
        unconfirmed_platform_work(survey="assignment__hit__survey", annotator="assignment__annotator")
    )


@transaction.atomic
def written_response_review(*, written, accept, actor, reason=""):
    """Accept a written next turn (it becomes a Response of the survey's named system) or reject it."""
    written = WrittenResponse.objects.select_for_update().select_related("assignment__hit__survey").get(pk=written.pk)
    survey = written.assignment.hit.survey
    if written.status != WrittenResponse.Status.PENDING:
        raise ReviewError("This written response has already been reviewed.")
    if accept and written_unconfirmed().filter(pk=written.pk).exists():
        # An id typed into a platform's study URL proves nothing: accepting would put its text in
        # the dataset as a system's responses (metrics, ADEM, reports) before the platform vouched for it.
        raise ReviewError(
            f"{survey.get_provider_display()} has not confirmed this participant's work yet, so the reply cannot "
            "join the dataset: sync with the platform (or confirm the participant), then accept it."
        )
    if accept:
        system, _ = System.objects.get_or_create(dataset=survey.dataset, name=survey.write_system_name)
        try:
            with transaction.atomic():
                response = Response.objects.create(context_id=written.context_id, system=system, text=written.text)
        except IntegrityError:
            raise ReviewError(
                f"This context already has a response from system {system.name!r}; reject this one or "
                "use another system name."
            ) from None
        written.response = response
        written.status = WrittenResponse.Status.ACCEPTED
    else:
        written.status = WrittenResponse.Status.REJECTED
    written.save(update_fields=["status", "response"])
    ReviewAction.objects.create(
        survey=survey,
        annotator_id=written.assignment.annotator_id,
        assignment=written.assignment,
        written_response=written,
        action=ReviewAction.Action.ACCEPT_WRITTEN if accept else ReviewAction.Action.REJECT_WRITTEN,
        reason=(reason or "").strip(),
        actor=actor,
    )
    return written
