"""CSRF failures on the annotator pages: a page that keeps the annotator's work, not a bare 403.

Two tabs opened on a first visit each get a CSRF cookie, and the last one set wins: the other
tab's form then fails the check. Nothing is stored by the failed request; this view shows the
same page again with a fresh token (for the cookie the browser holds now) and, on a task page,
the answers that were posted, so pressing Submit again sends them. The answers are also kept in
the browser's storage by task.js. A platform's entry page (link and code, Prolific) is shown again
as the survey's own start page is. Every other URL gets Django's own failure page.
"""

from django.shortcuts import redirect
from django.urls import Resolver404, resolve
from django.utils import timezone
from django.views import csrf as django_csrf

from annotation import selectors, services
from annotation.models import Assignment, Survey
from annotation.views.crowd.link_entry import link_entry_again
from annotation.views.crowd.prolific_entry import prolific_entry_again
from annotation.views.task import assignment_for_annotator, expired_page, start_page, task_page

SESSION_CHANGED = "Your session changed, perhaps because this study is also open in another tab. "
ANSWERS_KEPT = SESSION_CHANGED + "Your answers are kept: check them and press Submit again."
START_AGAIN = SESSION_CHANGED + "Nothing was lost: press the button again."


def csrf_failure(request, reason=""):
    try:
        match = resolve(request.path_info)
    except Resolver404:
        match = None
    view_name = match.view_name if match else ""
    if view_name == "annotation:task_assignment":
        return _task_again(request, match.kwargs["token"])
    if view_name == "annotation:task_entry":
        return _start_again(request, match.kwargs["token"])
    # A platform's entry, where Start (or "Do another task") posts: the same two tabs, the same page again.
    if view_name == "annotation:link_entry":
        return link_entry_again(request, match.kwargs["token"], error=START_AGAIN)
    if view_name == "annotation:prolific_entry":
        return prolific_entry_again(request, match.kwargs["token"], error=START_AGAIN)
    return django_csrf.csrf_failure(request, reason=reason)


def _task_again(request, token):
    assignment, refused = assignment_for_annotator(request, token, progress=True)
    if refused:
        return refused
    if assignment.status != Assignment.Status.ACTIVE:
        # The other tab submitted it: nothing to send again.
        return redirect("annotation:task_done", token=assignment.token)
    if assignment.expires_at and assignment.expires_at <= timezone.now():
        # Submitting again could store nothing: say it expired, as the task page itself would.
        return expired_page(request, assignment, status=409)
    answers = services.parse_answers(request.POST)
    return task_page(request, assignment, previous=answers, error=ANSWERS_KEPT, status=403)


def _start_again(request, token):
    survey = selectors.survey_for_link(token=token)
    if survey is None or survey.provider != Survey.Provider.LOCAL:
        return django_csrf.csrf_failure(request)
    return start_page(request, survey, error=START_AGAIN, status=403)
