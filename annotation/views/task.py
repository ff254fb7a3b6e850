"""The annotator's pages: the survey's shareable link and one HIT per page.

No login: an annotator is known by a worker id taken from `?worker=`, a form, or generated, and
kept in a signed cookie. A HIT page answers only to the annotator who claimed it.

Opening the link (GET) answers with the HIT page itself, not a redirect to `/a/<token>/`: the claim
has just read everything the page shows, so a redirect would cost the annotator a second round
trip and the server a second request that reads it all again. The form's action is the HIT's own
address, which also serves the page on a reload. The identifier form (POST) still redirects, so
that reloading the page does not post the form again.
"""

import secrets

from django.conf import settings
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation import selectors, services
from annotation.models import Assignment, Survey
from annotation.task_display import task_context

WORKER_COOKIE = "ratelab_worker"
WORKER_SALT = "annotation.worker"
WORKER_COOKIE_AGE = 180 * 24 * 3600


def worker_from_cookie(request):
    return request.get_signed_cookie(WORKER_COOKIE, default=None, salt=WORKER_SALT)


def _with_worker_cookie(response, worker_id):
    response.set_signed_cookie(
        WORKER_COOKIE,
        worker_id,
        salt=WORKER_SALT,
        max_age=WORKER_COOKIE_AGE,
        httponly=True,
        samesite="Lax",
        # Secure follows the session cookie: on in production, off for plain-http development.
        secure=settings.SESSION_COOKIE_SECURE,
    )
    return response


def _claim(request, survey, worker_id):
    """The annotator's assignment, or the page that says why there is none."""
    try:
        assignment = services.assignment_claim(
            survey=survey, worker_id=worker_id, provider=Survey.Provider.LOCAL, survey_is_current=True
        )
    except services.NoWorkAvailable as refusal:
        return None, render(request, "annotation/task/no_work.html", {"survey": survey, "message": str(refusal)})
    return assignment, None


def _hit_page(request, assignment, *, previous=None, error=""):
    """The HIT page for `assignment` (with `hit.survey`, `annotator` and `hits_done` loaded)."""
    survey = assignment.hit.survey
    context = task_context(
        survey=survey,
        assignment=assignment,
        submit_url=reverse("annotation:task_assignment", kwargs={"token": assignment.token}),
        progress={"hit_number": assignment.hits_done + 1, "max_hits": survey.max_hits_per_annotator},
        previous=previous,
        error=error,
    )
    return render(request, "annotation/task/hit.html", context, status=400 if error else 200)


@require_http_methods(["GET", "POST"])
def survey_entry(request, token):
    """The shareable link: identify the annotator, then hand out their next HIT."""
    survey = selectors.survey_for_link(token=token)
    if survey is None:
        raise Http404("No such study.")
    if survey.provider != Survey.Provider.LOCAL:
        return render(
            request, "annotation/task/no_work.html", {"survey": survey, "message": "This link is not active."}
        )
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        return render(
            request,
            "annotation/task/no_work.html",
            {"survey": survey, "message": "This study is not accepting work right now."},
        )
    error = ""
    if request.method == "POST":
        worker_id = request.POST.get("worker", "").strip() or f"anon-{secrets.token_hex(6)}"
        if services.worker_id_valid(worker_id):
            assignment, refused = _claim(request, survey, worker_id)
            response = refused or redirect("annotation:task_assignment", token=assignment.token)
            return _with_worker_cookie(response, worker_id)
        error = "Please use 1-64 letters, digits or . _ - @ : (or leave the field empty)."
    else:
        worker_id = request.GET.get("worker", "").strip() or worker_from_cookie(request)
        if worker_id and services.worker_id_valid(worker_id):
            assignment, refused = _claim(request, survey, worker_id)
            return _with_worker_cookie(refused or _hit_page(request, assignment), worker_id)
        if worker_id:
            error = "The identifier in the link is not valid: use 1-64 letters, digits or . _ - @ :"
    return render(
        request, "annotation/task/entry.html", {"survey": survey, "error": error}, status=400 if error else 200
    )


@require_http_methods(["GET", "POST"])
def assignment_page(request, token):
    """One HIT: GET shows it, POST submits it (all items answered, or nothing is stored)."""
    assignment = selectors.assignment_for_page(token=token, progress=request.method == "GET")
    if assignment is None:
        raise Http404("No such HIT.")
    survey = assignment.hit.survey
    if assignment.annotator is None or assignment.annotator.worker_id != worker_from_cookie(request):
        message = "This HIT belongs to another annotator."
        return render(request, "annotation/task/no_work.html", {"survey": survey, "message": message}, status=403)
    if assignment.status != Assignment.Status.ACTIVE:
        return redirect("annotation:task_done", token=assignment.token)
    if request.method == "GET":
        return _hit_page(request, assignment)
    answers = services.parse_answers(request.POST)
    try:
        services.assignment_submit(assignment=assignment, answers=answers, annotator=assignment.annotator)
    except services.SubmissionRefused as refusal:
        # Shown again with the answers given so far; the progress count is read only now.
        assignment.hits_done = selectors.hits_done(assignment=assignment)
        return _hit_page(request, assignment, previous=answers, error=str(refusal))
    return redirect("annotation:task_done", token=assignment.token)


def assignment_done(request, token):
    assignment = get_object_or_404(Assignment.objects.select_related("hit__survey", "annotator"), token=token)
    survey = assignment.hit.survey
    mine = assignment.annotator is not None and assignment.annotator.worker_id == worker_from_cookie(request)
    return render(
        request,
        "annotation/task/done.html",
        {"survey": survey, "assignment": assignment if mine else None, "more": survey.status == Survey.Status.LIVE},
    )
