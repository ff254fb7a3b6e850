"""The task page inside MTurk's frame, and the researcher's MTurk pages for a survey."""

import logging

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors
from annotation.crowd.base import MAX_AMOUNT, ProviderError, new_bonus_key, posted_bonus_key, typed_number
from annotation.crowd.mturk.provider import PREVIEW_ASSIGNMENT_ID, WORKER_SITES
from annotation.crowd.mturk.pure import cost_estimate, dollars, task_params_problem
from annotation.forms.mturk import MTurkSettingsForm
from annotation.models import HIT, Annotator, Assignment, Survey
from annotation.models.mturk import MTurkAssignment
from annotation.services import mturk as services
from annotation.services.assignments import SubmissionRefused, assignment_submit, parse_answers
from annotation.services.mturk_drafts import DraftRefused, mturk_draft_answers, mturk_draft_clear, mturk_draft_save
from annotation.views.task_page.display import task_context

logger = logging.getLogger(__name__)

# Only MTurk's own sites may frame the task page, and its form may post the finished assignment to
# them; every other page keeps X-Frame-Options DENY and the site-wide CSP (config/settings.py).
MTURK_SITES = ["https://www.mturk.com", "https://worker.mturk.com", "https://workersandbox.mturk.com"]


TASK_TEMPLATE = "annotation/mturk/task.html"


def _frameable(response):
    response._csp_replace = {"frame-ancestors": MTURK_SITES, "form-action": ["'self'", *MTURK_SITES]}
    return response


def _submit_site(survey, given):
    """Where the browser posts the finished assignment: MTurk's own site, never an arbitrary URL."""
    given = (given or "").rstrip("/")
    if given in WORKER_SITES.values() or given == "https://worker.mturk.com":
        return given
    return WORKER_SITES[services.mturk_settings_ensure(survey=survey).sandbox]


@xframe_options_exempt
@csrf_exempt  # inside MTurk's frame the CSRF cookie is third-party; the assignment token guards the POST
@require_http_methods(["GET", "POST"])
def mturk_task(request, token):
    """The shared annotator page (templates/annotation/task/hit.html) inside MTurk's frame."""
    survey = get_object_or_404(Survey, token=token, provider=Survey.Provider.MTURK)
    params = request.POST if request.method == "POST" else request.GET
    assignment_id = params.get("assignmentId", "")
    hit = HIT.objects.filter(survey=survey, external_id=params.get("hitId", "")).first()

    if not assignment_id or assignment_id == PREVIEW_ASSIGNMENT_ID:
        # Preview: the worker sees the task before accepting it; nothing can be submitted.
        hit = hit or HIT.objects.filter(survey=survey).order_by("position").first()
        if hit is None:
            return _frameable(HttpResponseBadRequest("This survey has no HITs yet."))
        return _frameable(render(request, TASK_TEMPLATE, task_context(survey=survey, hit=hit, preview=True)))

    worker_id = params.get("workerId", "")
    problem = task_params_problem(assignment_id=assignment_id, hit_id=params.get("hitId", ""), worker_id=worker_id)
    if problem or hit is None:
        # Refused before anything is read or written for it: no annotator, no slot.
        message = problem or "This HIT is not part of this study."
        return _frameable(render(request, "annotation/mturk/refused.html", {"message": message}, status=400))
    submit_site = _submit_site(survey, params.get("turkSubmitTo"))
    mturk_fields = {"assignment_id": assignment_id, "hit": hit, "worker_id": worker_id, "submit_site": submit_site}
    previous, error, restored = None, "", False
    try:
        if request.method == "GET":
            slot = services.mturk_assignment_open(hit=hit, assignment_id=assignment_id, worker_id=worker_id)
            if slot.status == Assignment.Status.ACTIVE:
                previous = mturk_draft_answers(assignment=slot)
                restored = previous is not None
        else:
            slot = get_object_or_404(
                Assignment, hit=hit, external_id=assignment_id, token=request.POST.get("assignment_token", "")
            )
            previous = parse_answers(request.POST)
            assignment_submit(assignment=slot, answers=previous)
            slot.refresh_from_db()
    except (services.TaskRefused, SubmissionRefused) as refusal:
        if request.method == "GET":
            context = {"survey": survey, "message": str(refusal)}
            return _frameable(render(request, "annotation/task/no_work.html", context, status=409))
        error = str(refusal)
    if slot.status != Assignment.Status.ACTIVE and not error:
        # Stored: hand the assignment back to MTurk from the worker's browser.
        mturk_draft_clear(assignment=slot)
        # save_key: the task page kept its answers in the browser under the slot's token (task.js).
        context = {**mturk_fields, "external_submit_url": f"{submit_site}/mturk/externalSubmit", "save_key": slot.token}
        return _frameable(render(request, "annotation/mturk/submitted.html", context))
    context = task_context(survey=survey, assignment=slot, previous=previous, error=error)
    context.update(mturk_fields, assignment_token=slot.token, draft_restored=restored)
    return _frameable(render(request, TASK_TEMPLATE, context, status=400 if error else 200))


@csrf_exempt  # inside MTurk's frame the CSRF cookie is third-party; the assignment token guards the POST
@require_POST
def mturk_draft(request, token):
    """Keep the answers given so far to an open assignment (the frame's script posts the task form)."""
    slot = get_object_or_404(
        Assignment,
        hit__survey__token=token,
        hit__external_id=request.POST.get("hitId", ""),
        external_id=request.POST.get("assignmentId", ""),
        token=request.POST.get("assignment_token", ""),
    )
    try:
        mturk_draft_save(assignment=slot, fields=request.POST)
    except DraftRefused as refusal:
        return HttpResponse(str(refusal), status=409, content_type="text/plain")
    return HttpResponse(status=204)


# --- researcher pages ----------------------------------------------------------------
def _own_survey(request, pk, *, change=False):
    surveys = selectors.surveys_changeable_by if change else selectors.surveys_visible_to
    return get_object_or_404(surveys(user=request.user), pk=pk, provider=Survey.Provider.MTURK)


@login_required
def mturk_survey(request, pk):
    survey = _own_survey(request, pk)
    mturk_settings = services.mturk_settings_ensure(survey=survey)
    hits = list(services.mturk_hits(survey=survey))
    estimate = cost_estimate(
        n_hits=len(hits), assignments_per_hit=survey.assignments_per_hit, reward_cents=survey.reward_cents
    )
    balance, balance_error = None, ""
    if request.GET.get("balance"):
        try:
            balance = dollars(services.mturk_balance_cents(survey=survey))
        except ProviderError as error:
            balance_error = str(error)
    slots = (
        Assignment.objects.filter(hit__survey=survey)
        .exclude(external_id="")
        .select_related("hit", "annotator", "mturk")
        .order_by("hit__position", "slot")
    )
    unmatched = MTurkAssignment.objects.filter(mturk_hit__hit__survey=survey, assignment__isnull=True)
    confirmed_count = slots.filter(mturk__confirmed=True).count()
    context = {
        "survey": survey,
        "settings_row": mturk_settings,
        "form": MTurkSettingsForm(instance=mturk_settings),
        "hits": hits,
        "published": sum(1 for hit in hits if hit.external_id),
        "estimate": estimate,
        "estimate_dollars": {k: dollars(v) for k, v in estimate.items() if k.endswith("_cents")},
        "balance": balance,
        "balance_error": balance_error,
        "slots": slots,
        "confirmed_count": confirmed_count,
        "unconfirmed_count": slots.count() - confirmed_count,
        "unmatched": unmatched,
        # A fresh key per page: the same bonus form sent twice (retry, double click) pays once.
        "bonus_key": new_bonus_key(),
        "worker_names": selectors.worker_names(user=request.user, study=survey),
    }
    return render(request, "annotation/mturk/survey.html", context)


# What each irreversible action does on Mechanical Turk: a first POST shows it on a page of its
# own; only the POST from that page's button (confirm=yes) acts.
IRREVERSIBLE = {
    "expire": "Every HIT of this survey is expired on Mechanical Turk: workers can no longer take them.",
    "reject": "The assignment is rejected on Mechanical Turk: the worker is not paid and their approval rate drops.",
    "block": "The worker is blocked from all your MTurk surveys (through the exclusion qualification).",
}
# The fields a confirmed action carries over from the form that asked for it. The page's block form
# names the worker by their annotator's row id (`annotator`), so a page showing pseudonyms carries
# no real id; `worker_id` is the id typed by whoever posts it (the command line's way).
CARRIED_FIELDS = ("assignment_id", "annotator", "worker_id", "reason")


def _annotator_of(survey, post):
    """The annotator the block form names by row id, among those who worked on this survey, or None."""
    value = post.get("annotator", "")
    if not (value.isascii() and value.isdigit()):
        return None
    return Annotator.objects.filter(pk=int(value), assignments__hit__survey=survey).distinct().first()


def _confirm_page(request, survey, action):
    carried = [(name, request.POST[name]) for name in CARRIED_FIELDS if name in request.POST]
    annotator = _annotator_of(survey, request.POST)
    names = selectors.worker_names(user=request.user, study=survey)
    context = {
        "survey": survey,
        "action": action,
        "consequence": IRREVERSIBLE[action],
        "carried": carried,
        "worker": names.of(annotator) if annotator else "",
    }
    return render(request, "annotation/mturk/confirm.html", context)


@login_required
@require_POST
def mturk_action(request, pk):
    """One POST endpoint for the page's buttons; each action calls one service."""
    survey = _own_survey(request, pk, change=True)
    action = request.POST.get("action", "")
    post = request.POST
    if action in IRREVERSIBLE and post.get("confirm") != "yes":
        return _confirm_page(request, survey, action)
    try:
        if action == "settings":
            form = MTurkSettingsForm(post, instance=services.mturk_settings_ensure(survey=survey))
            if not form.is_valid():
                messages.error(request, f"Settings not saved: {form.errors.as_text()}")
                return redirect("annotation:mturk_survey", pk=survey.pk)
            form.save()
            note = "Settings saved."
        elif action == "publish":
            services.mturk_publish(survey=survey)
            note = "Publishing queued; refresh to see the HITs."
        elif action == "sync":
            services.mturk_sync(survey=survey)
            note = "Sync queued."
        elif action == "apply_policy":
            counts = services.mturk_apply_attention_policy(survey=survey, approve_rest=bool(post.get("approve_rest")))
            note = f"Rejected {counts['rejected']} and approved {counts['approved']} assignments."
        elif action == "expire":
            note = f"Expired {services.mturk_expire(survey=survey)['expired']} HITs."
        elif action == "extend":
            result = services.mturk_extend(survey=survey, hours=typed_number(post.get("hours") or 24, what="Hours"))
            note = f"Extended {result['extended']} HITs."
        elif action == "notify":
            failures = services.mturk_notify(
                survey=survey, subject=post.get("subject", ""), message=post.get("message", "")
            )
            note = f"Message sent ({len(failures)} failures)."
        elif action == "block":
            # Unknown ids and other researchers' workers get the same message and the same redirect.
            # The page's form names the annotator's row (a row id of nobody here is refused like an
            # unknown id); a typed worker id is taken as typed.
            annotator = _annotator_of(survey, post)
            typed = "" if "annotator" in post else post.get("worker_id", "")
            worker_id = annotator.worker_id if annotator else typed
            services.mturk_block(survey=survey, worker_id=worker_id, reason=post.get("reason", ""))
            names = selectors.worker_names(user=request.user, study=survey)
            note = f"Blocked {names.of(annotator) if annotator else worker_id}."
        elif action in {"approve", "reject", "bonus"}:
            slot = services.mturk_find_assignment(survey=survey, assignment_id=post.get("assignment_id", ""))
            if action == "approve":
                services.mturk_approve(assignment=slot, feedback=post.get("feedback", ""))
            elif action == "reject":
                services.mturk_reject(assignment=slot, reason=post.get("reason", ""))
            else:
                cents = round(typed_number(post.get("amount_dollars") or 0, what="The bonus", most=MAX_AMOUNT) * 100)
                reason, key = post.get("reason", ""), posted_bonus_key(post)
                if not services.mturk_bonus(assignment=slot, amount_cents=cents, reason=reason, key=key):
                    # Said in words: a success message here would read as a second payment.
                    messages.warning(
                        request,
                        f"This form's bonus was already paid for {slot.external_id}; nothing more was sent. "
                        "To pay a further bonus, use the form on the page as it is now.",
                    )
                    return redirect("annotation:mturk_survey", pk=survey.pk)
            note = f"{action.capitalize()}: {slot.external_id}."
        else:
            return HttpResponseBadRequest("Unknown action.")
    except (ProviderError, ValueError) as error:
        messages.error(request, str(error))
    else:
        messages.success(request, note)
    return redirect("annotation:mturk_survey", pk=survey.pk)
