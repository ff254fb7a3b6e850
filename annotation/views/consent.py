"""The annotator's consent page and questionnaires (the survey's link token names the survey).

A step page knows its annotator by the identity cookie the entry page's Start set; a browser
without one is sent back to the entry page. GET only shows; POST records the answer, and once
the last step before the tasks is done, claims a task (the claim the Start would have made).
Declining claims nothing: on Prolific the participant goes back with the study's NO_CONSENT code.
"""

from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotation import selectors, services
from annotation.crowd.prolific.consent import no_consent_url
from annotation.crowd.prolific.submissions import PLACE_FREED
from annotation.models import Annotator, ProlificStudy, ProlificSubmission, Survey
from annotation.services import consent as consent_service
from annotation.services.questionnaire_spec import PREFER_NOT, parse_answers
from annotation.views.task_identity import browser_identity, with_identity_cookie
from annotation.views.task_page.wording import task_wording

# Providers whose entry pages run the steps (MTurk's preview-and-accept frame does not).
STEP_PROVIDERS = (Survey.Provider.LOCAL, Survey.Provider.PROLIFIC, Survey.Provider.LINK)


def step_redirect(survey, annotator):
    """A redirect to the consent or pre-task page this annotator must see before a claim, or None."""
    if survey.provider not in STEP_PROVIDERS:
        return None
    step = consent_service.next_step(survey, annotator)
    if step == "consent":
        return redirect("annotation:consent_page", token=survey.token)
    if step == "pre":
        return redirect("annotation:questionnaire_page", token=survey.token, phase="pre")
    return None


def post_url(survey, annotator):
    """The post-task questionnaire's address when this annotator still has it to answer, else ""."""
    if annotator is None or survey.provider not in STEP_PROVIDERS:
        return ""
    if not consent_service.post_pending(survey, annotator):
        return ""
    return reverse("annotation:questionnaire_page", kwargs={"token": survey.token, "phase": "post"})


def _message(request, survey, message, status=200, start_url=""):
    context = {"survey": survey, "message": message, "start_url": start_url}
    return render(request, "annotation/task/no_work.html", context, status=status)


def _entry_url(survey):
    names = {
        Survey.Provider.LOCAL: "annotation:task_entry",
        Survey.Provider.PROLIFIC: "annotation:prolific_entry",
        Survey.Provider.LINK: "annotation:link_entry",
    }
    return reverse(names[survey.provider], kwargs={"token": survey.token})


def _survey_and_annotator(request, token):
    """`(survey, annotator, setup, refusal)` for a step page."""
    survey = selectors.survey_for_link(token=token)
    if survey is None or survey.provider not in STEP_PROVIDERS:
        raise Http404("No such study.")
    setup = consent_service.setup_for(survey)
    if setup is None:
        raise Http404("This study has no consent page or questionnaire.")
    worker_id = browser_identity(request, survey=survey)[0]
    annotator = Annotator.objects.filter(provider=survey.provider, worker_id=worker_id).first() if worker_id else None
    if annotator is None:
        message = "This browser has not started this study yet: open the study's start page first."
        return survey, None, setup, _message(request, survey, message, 403, start_url=_entry_url(survey))
    return survey, annotator, setup, None


def _claim(request, survey, annotator):
    """The claim the entry page's Start makes, once the steps before the tasks are done (a POST)."""
    if survey.status != Survey.Status.LIVE:
        return _message(request, survey, "This study is not accepting work right now. Please come back later.")
    if survey.provider == Survey.Provider.PROLIFIC:
        freed = ProlificSubmission.objects.filter(
            study__survey=survey, annotator=annotator, status__in=PLACE_FREED
        ).exists()
        if freed:
            return _message(request, survey, "Prolific says this session has ended: no more work is handed to it.", 409)
    try:
        assignment = services.assignment_claim(
            survey=survey, worker_id=annotator.worker_id, provider=survey.provider, survey_is_current=True
        )
    except services.NoWorkAvailable as refusal:
        return _message(request, survey, str(refusal))
    return redirect("annotation:task_assignment", token=assignment.token)


def _keep_cookie(request, response, survey):
    worker_id, code = browser_identity(request, survey=survey)
    return with_identity_cookie(response, worker_id, code, survey=survey)


@never_cache
@require_http_methods(["GET", "POST"])
def consent_page(request, token):
    """GET: the researcher's consent text with Accept and Decline. POST: records the answer."""
    survey, annotator, setup, refused = _survey_and_annotator(request, token)
    if refused:
        return refused
    if not setup.consent_text:
        return redirect(_entry_url(survey))
    if request.method == "GET":
        context = {"survey": survey, "setup": setup, "wording": task_wording(survey)}
        return render(request, "annotation/consent/consent.html", context)
    choice = request.POST.get("choice")
    if choice not in ("accept", "decline"):
        context = {
            "survey": survey,
            "setup": setup,
            "wording": task_wording(survey),
            "error": "Choose one of the two buttons.",
        }
        return render(request, "annotation/consent/consent.html", context, status=400)
    consent_service.consent_record(survey=survey, annotator=annotator, accepted=choice == "accept")
    if choice == "decline":
        context = {"survey": survey, "return_url": ""}
        if survey.provider == Survey.Provider.PROLIFIC:
            study = ProlificStudy.objects.filter(survey=survey).first()
            context["return_url"] = no_consent_url(study) if study else ""
        return render(request, "annotation/consent/declined.html", context)
    step = step_redirect(survey, annotator)
    return _keep_cookie(request, step or _claim(request, survey, annotator), survey)


@never_cache
@require_http_methods(["GET", "POST"])
def questionnaire_page(request, token, phase):
    """GET: the pre- or post-task questions. POST: stores them (once), then the tasks or the finish."""
    survey, annotator, setup, refused = _survey_and_annotator(request, token)
    if refused:
        return refused
    if phase not in ("pre", "post"):
        raise Http404("No such questionnaire.")
    questions = setup.pre_questions if phase == "pre" else setup.post_questions
    if not questions:
        raise Http404("No such questionnaire.")
    if phase == "pre" and consent_service.consent_state(survey, annotator, setup) != "accepted":
        return redirect("annotation:consent_page", token=survey.token)
    if phase == "post" and not selectors.handed_in_work(survey=survey, annotator=annotator):
        return redirect(_entry_url(survey))  # the closing questions come after some work
    done = consent_service.answered(survey, annotator, phase)
    if request.method == "GET" or done:
        if done:
            return _after(request, survey, annotator, phase)
        return _form(request, survey, phase, questions)
    answers, errors = parse_answers(questions, request.POST)
    if errors:
        return _form(request, survey, phase, questions, answers=answers, errors=errors, status=400)
    consent_service.questionnaire_record(survey=survey, annotator=annotator, phase=phase, answers=answers)
    return _after(request, survey, annotator, phase)


def _after(request, survey, annotator, phase):
    """Where an answered questionnaire leads: the tasks (pre; a POST claims) or the way out (post)."""
    if phase == "pre":
        if request.method == "GET":
            return redirect(_entry_url(survey))  # a GET never claims: the entry page's Start does
        return _keep_cookie(request, step_redirect(survey, annotator) or _claim(request, survey, annotator), survey)
    if survey.provider == Survey.Provider.PROLIFIC:
        return redirect("annotation:prolific_finish", token=survey.token)
    if survey.provider == Survey.Provider.LINK:
        return redirect("annotation:link_finish", token=survey.token)
    return render(request, "annotation/consent/thanks.html", {"survey": survey})


def _form(request, survey, phase, questions, *, answers=None, errors=None, status=200):
    answers, errors = answers or {}, errors or {}
    rows = []
    for question in questions:
        key = question["key"]
        value = answers.get(key, "")
        rows.append(
            {
                **question,
                "name": f"q_{key}",
                "value": value,
                "chosen": [str(item) for item in (value if isinstance(value, list) else [value])],
                "skipped": key in answers and answers[key] is None,
                "error": errors.get(key, ""),
            }
        )
    context = {
        "survey": survey,
        "phase": phase,
        "questions": rows,
        "prefer_not": PREFER_NOT,
        "has_errors": bool(errors),
        "levels": ["1", "2", "3", "4", "5"],
    }
    return render(request, "annotation/consent/questionnaire.html", context, status=status)
