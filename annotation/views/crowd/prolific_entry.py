"""Prolific's side of the annotator pages: the study URL's entry page, the way back, the webhook.

The entry page reads PROLIFIC_PID, STUDY_ID and SESSION_ID from the URL. They are only claims:
the participant gets work (on POST, never on GET) under that id, but the work counts for nothing
until Prolific itself lists that session for that participant (see annotation.crowd.prolific.provider).
"""

import base64
import hashlib
import hmac
import re
import time

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors, services
from annotation.crowd.prolific.submissions import COMPLETE_URL, PLACE_FREED, apply_submission_status, completion_code
from annotation.crowd.prolific.tasks import prolific_sync_survey
from annotation.importing.text import unstorable
from annotation.models import ProlificStudy, ProlificSubmission, ProlificWebhookEvent, Survey
from annotation.services.identities import IdentityCapReached, newcomer_cap_check
from annotation.views.consent import post_url, step_redirect
from annotation.views.task_identity import client_address, with_identity_cookie, worker_from_cookie
from annotation.views.task_page.facts import entry_facts
from config.security.json_input import json_loads

PROLIFIC_ID_RE = re.compile(r"^[A-Za-z0-9]{1,64}$")
WEBHOOK_WINDOW_SECONDS = 300
# Prolific's events are a few hundred bytes. A larger body is refused from its Content-Length, before
# any of it is read and before the signature is checked (which needs the whole body): an anonymous
# client could otherwise make a web process read DATA_UPLOAD_MAX_MEMORY_SIZE (50 MB) per request.
WEBHOOK_MAX_BYTES = 64 * 1024
# The text fields an event may carry, with the most characters each may hold (the columns they land
# in): a longer one, or one the database cannot store (NUL), is no Prolific event.
EVENT_FIELDS = {
    "event_id": 100,
    "id": 100,
    "event_type": 60,
    "resource_id": 64,
    "status": 30,
    "participant_id": 64,
    "study_id": 64,
}
NO_WORK_NO_CODE = (
    "You have not handed in a task here yet, so there is no completion code: finish your task first, "
    "or go back to Prolific and return the study."
)


def _refuse(request, survey, message, status):
    return render(request, "annotation/task/no_work.html", {"survey": survey, "message": message}, status=status)


NOT_OPEN_YET = (
    "This study is not open yet: it has not been published on Prolific. "
    "Open it from Prolific once the researcher has published it."
)


class _NotOpenYet(Http404):
    """A Prolific survey whose study is not published: a 404 that says so (see prolific_entry)."""

    def __init__(self, survey):
        super().__init__(NOT_OPEN_YET)
        self.survey = survey


def _study_for(token):
    survey = selectors.survey_for_link(token=token)
    if survey is None or survey.provider != Survey.Provider.PROLIFIC:
        raise Http404("No such study.")
    study = ProlificStudy.objects.filter(survey=survey).first()
    if study is None or not study.study_id:
        raise _NotOpenYet(survey)
    return survey, study


def _params(data):
    values = {key: (data.get(key) or "").strip() for key in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")}
    bad = [key for key, value in values.items() if not PROLIFIC_ID_RE.match(value)]
    return values, bad


def _submission_for_cookie(request, study):
    worker_id = worker_from_cookie(request, survey=study.survey)
    if not worker_id:
        return None
    return study.submissions.select_related("annotator").filter(participant_id=worker_id).first()


def _entry_params(request, survey, study, data):
    """`(values, bad, own submission, None)` from the study URL's parameters, or `(..., refusal)`."""
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        return None, None, None, _refuse(request, survey, "This study is not accepting work right now.", 200)
    values, bad = _params(data)
    own = _submission_for_cookie(request, study)
    if bad and own is None:
        message = f"This link is missing or has a malformed {', '.join(bad)}: open the study from Prolific."
        return values, bad, own, _refuse(request, survey, message, 400)
    if not bad and values["STUDY_ID"] != study.study_id:
        message = "This link belongs to another Prolific study: open it from Prolific."
        return values, bad, own, _refuse(request, survey, message, 400)
    return values, bad, own, None


def _entry_page(request, survey, values, bad, *, error="", status=200):
    context = {"survey": survey, "params": values, "bad": bad, "error": error, **entry_facts(survey)}
    return render(request, "annotation/prolific/entry.html", context, status=status)


def prolific_entry_again(request, token, *, error):
    """The entry page again for a Start that failed the CSRF check (another tab replaced the
    cookie): no session was recorded, and its Start button, with a token that works now, goes on."""
    survey, study = _study_for(token)
    values, bad, _, refused = _entry_params(request, survey, study, request.POST)
    return refused or _entry_page(request, survey, values, bad, error=error, status=403)


@require_http_methods(["GET", "POST"])
def prolific_entry(request, token):
    """GET: what the task is and a Start button (claims nothing). POST: record the session, claim."""
    try:
        survey, study = _study_for(token)
    except _NotOpenYet as draft:  # the study URL of a draft, opened before publishing
        return _refuse(request, draft.survey, NOT_OPEN_YET, 404)
    data = request.POST if request.method == "POST" else request.GET
    values, bad, own, refused = _entry_params(request, survey, study, data)
    if refused:
        return refused
    if request.method == "GET":
        return _entry_page(request, survey, values, bad)
    if bad:
        submission = own
    else:
        address = client_address(request)
        try:
            with transaction.atomic():
                annotator = services.annotator_get(worker_id=values["PROLIFIC_PID"], provider=Survey.Provider.PROLIFIC)
                if not ProlificSubmission.objects.filter(session_id=values["SESSION_ID"]).exists():
                    # the parameters are only claims, made up as easily as ids on the survey's own
                    # link: new sessions are capped per address
                    newcomer_cap_check(survey=survey, address=address, joined=study.submissions.all())
                submission, _ = ProlificSubmission.objects.get_or_create(
                    session_id=values["SESSION_ID"],
                    defaults={
                        "study": study,
                        "participant_id": values["PROLIFIC_PID"],
                        "annotator": annotator,
                        "address": address,
                    },
                )
        except IdentityCapReached as refusal:
            return _refuse(request, survey, str(refusal), 429)
        except IntegrityError:
            submission = None
        except services.NoWorkAvailable as refusal:
            return _refuse(request, survey, str(refusal), 400)
        if submission is None:
            # The participant has another session in this study (the unique pair refused a second one).
            message = "You already have a session in this study: continue it from Prolific."
            return _refuse(request, survey, message, 409)
        if submission.participant_id != values["PROLIFIC_PID"] or submission.study_id != study.pk:
            return _refuse(request, survey, "This Prolific session belongs to someone else.", 403)
    if submission.status in PLACE_FREED:
        message = (
            "Prolific says this session has ended (returned, timed out or rejected): no more work is handed to it."
        )
        return _refuse(request, survey, message, 409)
    step = step_redirect(survey, submission.annotator)
    if step:  # consent or the pre-task questionnaire first; their POST makes the claim
        return with_identity_cookie(step, submission.participant_id, survey=survey)
    try:
        assignment = services.assignment_claim(
            survey=survey,
            worker_id=submission.participant_id,
            provider=Survey.Provider.PROLIFIC,
            survey_is_current=True,
        )
    except services.NoWorkAvailable as refusal:
        # Only someone who handed work in gets the completion code; someone who found no task (the
        # study is full) is asked to return it on Prolific, which frees the place for another.
        worked = selectors.handed_in_work(survey=survey, annotator=submission.annotator)
        response = render(
            request,
            "annotation/prolific/finished.html",
            {"survey": survey, "message": str(refusal), "token": survey.token, "worked": worked},
        )
    else:
        response = redirect("annotation:task_assignment", token=assignment.token)
    return with_identity_cookie(response, submission.participant_id, survey=survey)


def prolific_finish(request, token):
    """Back to Prolific with the completion code this participant's work earns."""
    survey, study = _study_for(token)
    submission = _submission_for_cookie(request, study)
    if submission is None:
        return _refuse(request, survey, "This browser has not started this study: open it from Prolific.", 403)
    if not selectors.handed_in_work(survey=survey, annotator=submission.annotator):
        # The code is what Prolific pays against: typing this URL after Start must not earn it.
        return _refuse(request, survey, NO_WORK_NO_CODE, 403)
    closing = post_url(survey, submission.annotator)
    if closing:  # the post-task questionnaire first; answering it leads back here
        return redirect(closing)
    return redirect(COMPLETE_URL.format(code=completion_code(study, submission.annotator)))


def signature_valid(*, secret, timestamp, body, signature, now=None):
    """Prolific's signature: base64(HMAC-SHA256(secret, timestamp + body)), within a time window."""
    if not (secret and timestamp and signature):
        return False
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    if abs((now or time.time()) - sent) > WEBHOOK_WINDOW_SECONDS:
        return False
    expected = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest())
    return hmac.compare_digest(expected, signature.encode())


@csrf_exempt
@require_POST
def prolific_webhook(request):
    """Prolific's webhook deliveries: each event applied once, a repeat answered 200 and ignored."""
    if _declared_length(request) > WEBHOOK_MAX_BYTES:
        # Nothing of the body is read (Django reads it on first access to request.body).
        return HttpResponse(
            f"Body larger than {WEBHOOK_MAX_BYTES // 1024} KB: no Prolific event is.",
            status=413,
            content_type="text/plain",
        )
    if not signature_valid(
        secret=settings.PROLIFIC_WEBHOOK_SECRET,
        timestamp=request.headers.get("X-Prolific-Request-Timestamp", ""),
        body=request.body,
        signature=request.headers.get("X-Prolific-Request-Signature", ""),
    ):
        return HttpResponse("Bad or stale signature.", status=403, content_type="text/plain")
    try:
        event = json_loads(request.body)
    except ValueError:
        return HttpResponseBadRequest("Body is not JSON.", content_type="text/plain")
    if not _is_event(event):
        # Signed, so Prolific's: a 500 would have it deliver the same body again and again.
        return HttpResponseBadRequest(
            "Body is not an event: an object with short text fields.", content_type="text/plain"
        )
    event_id = event.get("event_id") or event.get("id") or hashlib.sha256(request.body).hexdigest()
    with transaction.atomic():
        _, new = ProlificWebhookEvent.objects.get_or_create(
            event_id=event_id, defaults={"event_type": event.get("event_type", "")}
        )
        if new:
            _apply(event)
    return HttpResponse("ok", content_type="text/plain")


def _declared_length(request):
    """The body's size as the client declared it (Django reads no more than this); 0 when absent,
    as Django reads it then."""
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _is_event(event):
    """An object whose fields this view reads are text where present (Prolific's documented shape),
    each short enough for its column and storable (no NUL, no unpaired surrogate)."""
    if not isinstance(event, dict):
        return False
    for key, most in EVENT_FIELDS.items():
        value = event.get(key, "")
        if not isinstance(value, str) or len(value) > most or unstorable(value):
            return False
    return True


def _apply(event):
    kind, status = event.get("event_type", ""), str(event.get("status", ""))
    if kind == "study.status.change":
        ProlificStudy.objects.filter(study_id=event.get("resource_id", "")).update(status=status)
    elif kind == "submission.status.change":
        row = (
            ProlificSubmission.objects.select_related("study__survey", "annotator")
            .filter(session_id=event.get("resource_id", ""))
            .first()
        )
        if row is not None:
            row = apply_submission_status(
                row, status=status, participant_id=event.get("participant_id", ""), study_id=event.get("study_id", "")
            )
            if not row.confirmed:
                # Prolific's documented payload names the submission and participant but not the
                # study; a session id typed into our study URL could be one of another study. The
                # study's own submission list settles it, so ask for that instead of trusting this.
                survey_id = row.study.survey_id
                transaction.on_commit(lambda: prolific_sync_survey.delay(survey_id))
