"""The entry page of a survey run on another platform (link and completion code), and the way back.

The participant id comes from the URL parameter the researcher named; like Prolific's, it is only
a claim: the work counts once the researcher confirms the ids the platform lists as completed.
"""

import re

from django.db import IntegrityError, transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotation import selectors, services
from annotation.models import LinkParticipant, LinkPlatform, Survey
from annotation.services.identities import IdentityCapReached, newcomer_cap_check
from annotation.views.consent import post_url, step_redirect
from annotation.views.task_identity import client_address, with_identity_cookie, worker_from_cookie
from annotation.views.task_page.facts import entry_facts

# Platforms' participant ids: letters and digits, and the - and _ some of them use (no spaces,
# nothing a URL or a CSV cell would need to escape).
PARTICIPANT_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _platform_for(token):
    survey = selectors.survey_for_link(token=token)
    if survey is None or survey.provider != Survey.Provider.LINK:
        raise Http404("No such study.")
    platform = LinkPlatform.objects.filter(survey=survey).first()
    if platform is None or not platform.completion_url:
        raise Http404("No such study.")
    return survey, platform


def _refuse(request, survey, message, status):
    return render(request, "annotation/task/no_work.html", {"survey": survey, "message": message}, status=status)


def _participant(request, survey, platform, data):
    """`(participant id, None)` from the named parameter (else the browser's cookie), or `(None, refusal)`."""
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        return None, _refuse(request, survey, "This study is not accepting work right now.", 200)
    participant = (data.get(platform.participant_param) or "").strip() or (
        worker_from_cookie(request, survey=survey) or ""
    )
    if not PARTICIPANT_ID_RE.match(participant):
        message = f"This link is missing or has a malformed {platform.participant_param}: open it from your platform."
        return None, _refuse(request, survey, message, 400)
    return participant, None


def _entry_page(request, survey, platform, participant, *, error="", status=200):
    context = {"survey": survey, "param": platform.participant_param, "participant": participant, "error": error}
    context.update(entry_facts(survey))
    return render(request, "annotation/link_platform/entry.html", context, status=status)


def link_entry_again(request, token, *, error):
    """The entry page again for a Start that failed the CSRF check (another tab replaced the
    cookie): nothing was recorded, and its Start button, with a token that works now, goes on."""
    survey, platform = _platform_for(token)
    participant, refused = _participant(request, survey, platform, request.POST)
    return refused or _entry_page(request, survey, platform, participant, error=error, status=403)


@require_http_methods(["GET", "POST"])
def link_entry(request, token):
    """GET: the task and a Start button (claims nothing). POST: record the participant, claim."""
    survey, platform = _platform_for(token)
    data = request.POST if request.method == "POST" else request.GET
    participant, refused = _participant(request, survey, platform, data)
    if refused:
        return refused
    if request.method == "GET":
        return _entry_page(request, survey, platform, participant)
    address, annotator = client_address(request), None
    try:
        with transaction.atomic():
            annotator = services.annotator_get(worker_id=participant, provider=Survey.Provider.LINK)
            if not survey.link_participants.filter(participant_id=participant).exists():
                # ids are made up as easily as on the survey's own link: new ones are capped per address
                newcomer_cap_check(survey=survey, address=address, joined=survey.link_participants.all())
            _, created = LinkParticipant.objects.get_or_create(
                survey=survey, participant_id=participant, defaults={"annotator": annotator, "address": address}
            )
        if not created and worker_from_cookie(request, survey=survey) != participant:
            # An id is no secret: whoever typed a started participant's id into the link would get their
            # task (and their cookie) and hand in work the platform then lists as theirs. Asked of
            # get_or_create's answer, so that an id recorded by another browser a moment ago counts too.
            message = (
                f"The {platform.participant_param} {participant} has already started this study in another "
                "browser: continue there. If that is not possible, contact the researcher."
            )
            return _refuse(request, survey, message, 409)
        step = step_redirect(survey, annotator)
        if step:  # consent or the pre-task questionnaire first; their POST makes the claim
            return with_identity_cookie(step, participant, survey=survey)
        assignment = services.assignment_claim(
            survey=survey, worker_id=participant, provider=Survey.Provider.LINK, survey_is_current=True
        )
    except IdentityCapReached as refusal:
        return _refuse(request, survey, str(refusal), 429)
    except IntegrityError:
        return _refuse(request, survey, "This participant could not be recorded; try again.", 409)
    except services.NoWorkAvailable as refusal:
        # Only someone who handed work in is shown the way to the completion code.
        worked = annotator is not None and selectors.handed_in_work(survey=survey, annotator=annotator)
        finish_url = platform_finish_url(survey) if worked else ""
        context = {"survey": survey, "message": str(refusal), "finish_url": finish_url}
        response = render(request, "annotation/link_platform/finished.html", context)
    else:
        response = redirect("annotation:task_assignment", token=assignment.token)
    return with_identity_cookie(response, participant, survey=survey)


def platform_finish_url(survey):
    return reverse("annotation:link_finish", args=[survey.token])


@never_cache
def link_finish(request, token):
    """The survey's completion code, shown, and the way back to the platform with it."""
    survey, platform = _platform_for(token)
    participant = worker_from_cookie(request, survey=survey)
    row = LinkParticipant.objects.filter(survey=survey, participant_id=participant).select_related("annotator").first()
    if not participant or row is None:
        return _refuse(request, survey, "This browser has not started this study: open it from your platform.", 403)
    if not selectors.handed_in_work(survey=survey, annotator=row.annotator):
        # The code is what the platform pays against: typing this URL after Start must not earn it.
        message = "You have not handed in a task here yet, so there is no completion code: finish your task first."
        return _refuse(request, survey, message, 403)
    closing = post_url(survey, row.annotator)
    if closing:  # the post-task questionnaire first; answering it leads back here
        return redirect(closing)
    # Shown here as well as carried by the button: a completion URL that does not load (a typo, the
    # platform down) left the participant with a browser error and no code, when Finish redirected.
    context = {
        "survey": survey,
        "code": platform.completion_code,
        "return_url": platform.completion_url.replace("{code}", platform.completion_code),
    }
    return render(request, "annotation/link_platform/code.html", context)
