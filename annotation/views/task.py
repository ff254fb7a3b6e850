"""The annotator's pages: the survey's shareable link (a start page) and one task per page.

No login. A browser's identity is a signed cookie made when the annotator presses Start (a POST
with CSRF); elsewhere they continue with the resume code their pages show. A GET never claims
work and never makes or adopts an identity: reloading the link, or going Back to it, shows the
start page again ("Continue your task" when one is open). `?worker=` only fills in the label of a
new identity; naming someone else's id gets neither their task nor their cookie.

Start answers with the task's page itself (one request, not a redirect and a second one: fifty
annotators pressing Start at once queue for the server, issue 37); task.js then puts the task's
own address in the address bar, so a reload is a GET of the task and never posts a claim again.
Without the script a reload posts Start again, which claims nothing new: the annotator's held
task comes back.
"""

from contextlib import nullcontext

from django.db import connection, transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from annotation import selectors, services
from annotation.models import Annotator, Assignment, Survey
from annotation.services.claims import NO_MORE_WORK, cap_reached_message
from annotation.services.identities import (
    WORKER_ID_HELP,
    IdentityCapReached,
    IdentityRefused,
    identity_create_and_claim,
    identity_for_resume_code,
    resume_code_display,
)
from annotation.views.consent import post_url, step_redirect
from annotation.views.task_identity import (
    browser_identity,
    client_address,
    start_code_from,
    start_code_signed,
    with_identity_cookie,
    with_start_cookie,
    worker_from_cookie,
)
from annotation.views.task_next import claim_next, held_task_redirect, next_offered, wants_next
from annotation.views.task_page.display import task_context
from annotation.views.task_page.facts import task_facts, tasks_at_most
from annotation.views.task_page.wording import task_wording

__all__ = ["assignment_done", "assignment_page", "survey_entry", "worker_from_cookie"]


def _no_work(request, survey, message, status=200, start_url=""):
    context = {"survey": survey, "message": message, "start_url": start_url}
    return render(request, "annotation/task/no_work.html", context, status=status)


def _active_token(survey, worker_id):
    """The token of the task this identity holds in `survey` now, or None (a read; claims nothing)."""
    if not worker_id:
        return None
    return (
        Assignment.objects.filter(
            hit__survey=survey,
            annotator__provider=Survey.Provider.LOCAL,
            annotator__worker_id=worker_id,
            status=Assignment.Status.ACTIVE,
            expires_at__gt=timezone.now(),
        )
        .values_list("token", flat=True)
        .first()
    )


def _no_more_work(survey, worker_id):
    """Why this browser's identity can take no more tasks of `survey` ("" when it can or has none):
    what pressing Start would tell it, said on the start page instead of behind a Start button."""
    annotator_id = (
        Annotator.objects.filter(provider=Survey.Provider.LOCAL, worker_id=worker_id)
        .values_list("pk", flat=True)
        .first()
    )
    if annotator_id is None:
        return ""
    if selectors.hits_finished(survey_id=survey.pk, annotator_id=annotator_id) >= survey.max_hits_per_annotator:
        return cap_reached_message(survey.max_hits_per_annotator)
    if not selectors.open_hit_left(survey_id=survey.pk, annotator_id=annotator_id):
        return NO_MORE_WORK
    return ""


def start_page(request, survey, *, error="", status=200, label="", resume_error=False):
    """The link's start page: what the task is, its size and time, and Start / Continue."""
    worker_id, code = browser_identity(request, survey=survey)
    if not label and not worker_id:
        wanted = request.GET.get("worker", "").strip()
        label = wanted if services.worker_id_valid(wanted) else ""
    invite = _invitation(request.POST.get("invite") or request.GET.get("invite"))
    if invite and invite[0].worker_id == worker_id:
        invite = None  # this browser is that annotator already
    if invite is False:
        error = error or "This invitation link is not valid: check that it was copied whole."
        invite = None
    active_token = _active_token(survey, worker_id)
    accepting = survey.status == Survey.Status.LIVE
    facts = task_facts(survey=survey)
    context = {
        "survey": survey,
        "facts": facts,
        "tasks_at_most": tasks_at_most(survey=survey, facts=facts),
        "wording": task_wording(survey),
        "worker_id": worker_id,
        "resume_code": code,
        "active_token": active_token,
        "resumed": request.GET.get("resumed") == "1",
        "no_more_work": _no_more_work(survey, worker_id)
        if worker_id and accepting and not (active_token or invite)
        else "",
        "label": label,
        "error": error,
        "resume_error": resume_error,
        "worker_id_help": WORKER_ID_HELP,
        "accepting": accepting,
        "invite_for": invite[0].worker_id if invite else "",
        "invite_code": invite[1] if invite else "",
        # a browser without an identity: the code its Start gives the new one, the same in every tab
        "start": start_code_signed(request) if not worker_id and not invite else "",
    }
    response = render(request, "annotation/task/entry.html", context, status=status)
    return with_start_cookie(response, context["start"]) if context["start"] else response


def _invitation(code):
    """`(annotator, code)` for a personal invitation's code, False for an unknown one, None for none."""
    if not code:
        return None
    annotator = identity_for_resume_code(code=code)
    return (annotator, resume_code_display(code)) if annotator else False


def _claim_and_go(request, survey, worker_id, code, *, known=False, taken=None):
    """Claim a task for `worker_id` and answer with its page (or go to a step before the tasks, or
    to "no work"). `known`: their annotator row exists (just made or found by `identity_create`): no
    insert to try. `taken`: the task already claimed with their new identity (nothing left to do)."""
    if taken is not None:
        return with_identity_cookie(task_page(request, taken, resume_code=code), worker_id, code, survey=survey)
    step = None
    if survey.asks_before_tasks:  # read from the survey row: a survey without steps pays no query here
        annotator = Annotator.objects.filter(provider=Survey.Provider.LOCAL, worker_id=worker_id).first()
        step = step_redirect(survey, annotator) if annotator else None
    if step:  # consent or the pre-task questionnaire first; their POST makes this claim
        return with_identity_cookie(step, worker_id, code, survey=survey)
    try:
        assignment = services.assignment_claim(
            survey=survey, worker_id=worker_id, provider=Survey.Provider.LOCAL, survey_is_current=True, known=known
        )
    except services.NoWorkAvailable as refusal:
        response = _no_work(request, survey, str(refusal))
    else:
        response = task_page(request, assignment, resume_code=code)
    return with_identity_cookie(response, worker_id, code, survey=survey)


@require_http_methods(["GET", "POST"])
def survey_entry(request, token):
    """GET: the start page. POST `action=start`: claim a task (making an identity first if the
    browser has none); POST `action=resume`: adopt the identity a resume code belongs to."""
    survey = selectors.survey_for_link(token=token)
    if survey is None:
        raise Http404("No such study.")
    if survey.provider != Survey.Provider.LOCAL:
        return _no_work(request, survey, "This link is not active.")
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        return _no_work(request, survey, "This study is not accepting work right now.")
    if request.method == "GET":
        return start_page(request, survey)

    if request.POST.get("action") == "resume":
        annotator = identity_for_resume_code(code=request.POST.get("resume_code", ""))
        if annotator is None:
            error = "That resume code is not known. Check it (it looks like abcde-fghjk-mnpqr-stuvw), or start anew."
            return start_page(request, survey, error=error, status=400, resume_error=True)
        code = resume_code_display(request.POST["resume_code"])
        # `resumed`: the start page's "Continue your task" says so to the task page (F12).
        start_url = reverse("annotation:task_entry", kwargs={"token": survey.token}) + "?resumed=1"
        return with_identity_cookie(redirect(start_url), annotator.worker_id, code, survey=survey)

    worker_id, code = browser_identity(request, survey=survey)
    invite = _invitation(request.POST.get("invite", "").strip())
    if invite is False:
        return start_page(request, survey, status=400)
    if invite:
        # A personal invitation: its code is the identity's resume code, a secret only the invitee has.
        worker_id, code = invite[0].worker_id, invite[1]
    elif worker_id is None:
        label = request.POST.get("worker", "").strip()
        try:
            # Their first task comes in the identity's own transaction, unless a step (consent, a
            # questionnaire) comes first.
            annotator, code, taken = identity_create_and_claim(
                survey=survey,
                address=client_address(request),
                label=label,
                code=start_code_from(request.POST.get("start")),
                claim=not survey.asks_before_tasks,
            )
        except IdentityCapReached as refusal:
            return _no_work(request, survey, str(refusal), status=429)
        except IdentityRefused as refusal:
            return start_page(request, survey, error=str(refusal), status=400, label=label)
        return _claim_and_go(request, survey, annotator.worker_id, code, known=True, taken=taken)
    return _claim_and_go(request, survey, worker_id, code)


def task_page(
    request, assignment, *, previous=None, error="", missing=(), status=None, submitted=None, resume_code=None
):
    """The task page for `assignment` (with `hit.survey`, `annotator` and `hits_done` loaded).

    `submitted`: the assignment whose "Submit and next task" this page answers (task_next.py): the
    page says its answers are saved and task.js drops the browser's copy of them. `resume_code`:
    the code of the identity this response's cookie sets (Start answers with the page), else the
    request's cookie's.
    """
    survey = assignment.hit.survey
    # A local annotator holds one task per survey at a time and a slot that expires goes back to
    # the pool without them, so no finished task means nothing else of theirs in the survey: no
    # rating of theirs can drop an overlap item, and the HIT's stored page holds as it is.
    assignment.first_in_survey = assignment.hits_done == 0
    # "of at most": the cap, or the survey's number of HITs when it has fewer (F11); never below the
    # task shown.
    progress = {
        "hit_number": assignment.hits_done + 1,
        "max_hits": max(
            tasks_at_most(survey=survey, hits=getattr(assignment, "survey_hits", None)), assignment.hits_done + 1
        ),
    }
    context = task_context(
        survey=survey,
        assignment=assignment,
        submit_url=reverse("annotation:task_assignment", kwargs={"token": assignment.token}),
        progress=progress,
        previous=previous,
        error=error,
        missing=missing,
    )
    context["resume_code"] = resume_code or browser_identity(request, survey=assignment.hit.survey)[1]
    context["next_offered"] = next_offered(survey, progress)
    context["submitted_key"] = submitted.token if submitted is not None else ""
    # Reached from the start page after a resume code (F12): answers not submitted stay in the
    # browser that gave them; the page says so (task.js hides it where this browser kept some).
    context["resumed"] = request.method == "GET" and request.GET.get("resumed") == "1"
    return render(request, "annotation/task/hit.html", context, status=status or (400 if error else 200))


def assignment_for_annotator(request, token, *, progress):
    """`(assignment, refusal)`: the task behind `token` if this browser's identity holds it."""
    assignment = selectors.assignment_for_page(token=token, progress=progress)
    if assignment is None:
        raise Http404("No such task.")
    if assignment.annotator is None or assignment.annotator.worker_id != worker_from_cookie(
        request, survey=assignment.hit.survey
    ):
        # Often the annotator's own task, its link copied to another browser or device: say how to go
        # on (a built-in link's identity moves with its resume code), showing nothing of the task.
        survey = assignment.hit.survey
        message = "This task belongs to another annotator, or was started in another browser or on another device."
        if survey.provider == Survey.Provider.LOCAL:
            message += (
                " Continue it there, or open the study's start page here and enter your resume code. Answers"
                " given there and not yet submitted stay in that browser."
            )
            start_url = reverse("annotation:task_entry", kwargs={"token": survey.token})
            return None, _no_work(request, survey, message, status=403, start_url=start_url)
        return None, _no_work(request, survey, message + " Continue it there.", status=403)
    return assignment, None


@require_http_methods(["GET", "POST"])
def assignment_page(request, token):
    """One task: GET shows it, POST submits it (all items answered, or nothing is stored)."""
    assignment, refused = assignment_for_annotator(request, token, progress=request.method == "GET")
    if refused:
        return refused
    if assignment.status != Assignment.Status.ACTIVE:
        if request.method == "POST" and wants_next(request, assignment.hit.survey):
            # A replay of "Submit and next task": the task it led to, never a second claim.
            return held_task_redirect(assignment.hit.survey, assignment.annotator, assignment)
        return redirect("annotation:task_done", token=assignment.token)
    if assignment.expires_at and assignment.expires_at <= timezone.now():
        # Past its deadline but not yet returned to the pool (the sweep runs every few minutes):
        # shown, it would be worked on for nothing, as its submission is refused.
        return expired_page(request, assignment, status=200 if request.method == "GET" else 409)
    if request.method == "GET":
        return task_page(request, assignment)
    answers = services.parse_answers(request.POST)
    survey = assignment.hit.survey
    going_on = wants_next(request, survey)
    try:
        # With "Submit and next task" on PostgreSQL, the answers and the next slot are one transaction
        # (one commit, whose wait on the disk every task paid twice); the claim runs in a savepoint
        # that claim_next rolls back alone if it fails, so the answers are stored whatever it meets.
        # Not on SQLite: its reads before the flip would hold a shared lock that two writers then
        # cannot both upgrade ("database is locked"); each write there takes the one write lock anyway.
        one_commit = going_on and connection.vendor == "postgresql"
        with transaction.atomic() if one_commit else nullcontext():
            result = services.assignment_submit(assignment=assignment, answers=answers, annotator=assignment.annotator)
            following = claim_next(survey, assignment.annotator) if going_on and not result.replayed else None
    except services.SubmissionRefused as refusal:
        # Shown again with the answers given so far; the progress count is read only now.
        assignment.hits_done = selectors.hits_done(assignment=assignment)
        return task_page(request, assignment, previous=answers, error=str(refusal), missing=refusal.missing)
    if going_on:
        if result.replayed:  # a double click's second request: where the first one led
            return held_task_redirect(survey, assignment.annotator, assignment)
        if following is not None:
            return task_page(request, following, submitted=assignment)
    return redirect("annotation:task_done", token=assignment.token)


def expired_page(request, assignment, *, status):
    """An annotator's task that ran out of time: nothing of it is stored; a new one is a press away."""
    survey = assignment.hit.survey
    context = {"survey": survey, "minutes": survey.assignment_minutes, "more": survey.status == Survey.Status.LIVE}
    return render(request, "annotation/task/expired.html", context, status=status)


def assignment_done(request, token):
    assignment = get_object_or_404(Assignment.objects.select_related("hit__survey", "annotator"), token=token)
    survey = assignment.hit.survey
    mine = assignment.annotator is not None and assignment.annotator.worker_id == worker_from_cookie(
        request, survey=survey
    )
    if mine and assignment.status == Assignment.Status.ACTIVE:
        # Not handed in: "saved" would be untrue, and this page drops the browser's kept answers.
        return redirect("annotation:task_assignment", token=assignment.token)
    context = {
        "survey": survey,
        "assignment": assignment if mine else None,
        # "Do another task" only where there is one to do: an annotator at the survey's cap (a
        # Prolific participant with one task to do, say) or who has held every HIT with a free
        # slot was offered it and sent to "no more work".
        "more": survey.status == Survey.Status.LIVE
        and not (
            mine
            and (
                selectors.hits_done(assignment=assignment) >= survey.max_hits_per_annotator
                or not selectors.work_left_for(assignment=assignment)
            )
        ),
        "resume_code": browser_identity(request, survey=survey)[1] if mine else "",
        "post_url": post_url(survey, assignment.annotator) if mine else "",
    }
    return render(request, "annotation/task/done.html", context)
