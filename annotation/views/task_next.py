"""Submit and go on: a submission that asks for the next task (`then=next`) answers with it.

An annotator working through a survey used to pay four requests a task (Start's claim, the task
page, the submission, the thank-you page); pressing "Submit and next task" makes it one: the
submission stores the answers, claims the next task in the same request and answers with that
task's page (task.js then puts the new task's own address in the address bar, so a reload is a
plain GET of it). "Submit and stop" (and any submission without `then=next`) still leads to the
thank-you page, with its completion code, closing questions and "Do another task".

The rules of a claim hold as on Start: only a POST claims; a survey that asks for consent or a
pre-task questionnaire, a paused or closed survey, an annotator at the survey's cap or with no
HIT left, and a Prolific session that has ended all get the thank-you page instead (it says why
there is no other task). A replayed submission (a retry, a double click, Back and submit again)
never claims: it leads to the task the annotator holds now, or to the thank-you page.
"""

import logging

from django.db import DatabaseError, transaction
from django.shortcuts import redirect

from annotation import services
from annotation.crowd.prolific.submissions import PLACE_FREED
from annotation.models import Assignment, ProlificSubmission, Survey
from annotation.views.consent import step_redirect

logger = logging.getLogger(__name__)

# Providers whose annotators work on RateLab's own task page and thank-you page. An MTurk HIT is
# submitted to MTurk from its own frame, one MTurk assignment at a time, so it never goes on here.
NEXT_PROVIDERS = (Survey.Provider.LOCAL, Survey.Provider.LINK, Survey.Provider.PROLIFIC)


def next_offered(survey, progress):
    """Whether the task page offers "Submit and next task": a provider that can, and a task after
    the one shown within the page's "Task n of at most m" (the cap, or the survey's HITs if fewer)."""
    return survey.provider in NEXT_PROVIDERS and progress["hit_number"] < progress["max_hits"]


def wants_next(request, survey):
    return request.POST.get("then") == "next" and survey.provider in NEXT_PROVIDERS


def _may_claim(survey, annotator):
    """Whether a claim for `annotator` may be made here, as Start would make it."""
    if survey.status != Survey.Status.LIVE:
        return False
    if survey.asks_before_tasks and step_redirect(survey, annotator) is not None:
        return False  # a step became due (the researcher added one): the thank-you page leads on
    if survey.provider == Survey.Provider.PROLIFIC:
        ended = ProlificSubmission.objects.filter(study__survey=survey, annotator=annotator, status__in=PLACE_FREED)
        if ended.exists():
            return False
    return True


def held_task_redirect(survey, annotator, submitted):
    """After a replayed submission: the task `annotator` holds in `survey` now, else the thank-you
    page of `submitted` (a read; claims nothing)."""
    held = (
        Assignment.objects.filter(hit__survey=survey, annotator=annotator, status=Assignment.Status.ACTIVE)
        .order_by()
        .values_list("token", flat=True)
        .first()
    )
    if held:
        return redirect("annotation:task_assignment", token=held)
    return redirect("annotation:task_done", token=submitted.token)


def claim_next(survey, annotator):
    """The next task for `annotator` after a fresh submission, or None (no work, or not allowed)."""
    if not _may_claim(survey, annotator):
        return None
    try:
        # A savepoint: called in the submission's transaction, a claim that fails on the database
        # is undone alone and the stored answers commit (the thank-you page then offers another task).
        with transaction.atomic():
            # `survey` was read with the submitted assignment in this request: as current as a second read.
            return services.assignment_claim(
                survey=survey,
                worker_id=annotator.worker_id,
                provider=annotator.provider,
                survey_is_current=True,
                known=True,  # their submission was just stored: the row exists, no insert to try
            )
    except services.NoWorkAvailable:
        return None
    except DatabaseError:
        logger.exception("Submit and next task: the next claim failed; the answers were stored")
        return None
