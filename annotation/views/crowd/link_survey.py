"""The researcher's page of a survey run on a link-and-completion-code platform (CloudResearch
Connect, SONA, ...): the URL to give the platform, the way back, and confirming participants.

There is no API to ask, so the page is where the researcher says which participants the platform
lists as completed (the same as `manage.py link_confirm`); only their work counts and can be reviewed.
"""

from operator import attrgetter

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors
from annotation.crowd.base import ProviderError
from annotation.crowd.link_platform import (
    confirm_participants,
    platform_settings,
    platform_update,
    unconfirm_participants,
)
from annotation.models import Assignment, Survey

# Ids shown back after a paste, at most (a platform's export may list thousands).
UNKNOWN_SHOWN = 20


def _link_survey(request, pk, *, change=False):
    surveys = selectors.surveys_changeable_by if change else selectors.surveys_visible_to
    return get_object_or_404(surveys(user=request.user), pk=pk, provider=Survey.Provider.LINK)


def entry_url(request, survey, param):
    base = (settings.PUBLIC_BASE_URL or request.build_absolute_uri("/")).rstrip("/")
    return f"{base}{reverse('annotation:link_entry', args=[survey.token])}?{param}="


@login_required
@require_http_methods(["GET", "POST"])
def link_survey(request, pk):
    """The page; its settings form posts here, so a refused value is shown again at the page's own
    address (with what was typed) and a saved one redirects back to it."""
    if request.method == "POST":
        return _save_settings(request, _link_survey(request, pk, change=True))
    survey = _link_survey(request, pk)
    return render(request, "annotation/link_platform/survey.html", _page_context(request, survey))


def _save_settings(request, survey):
    post = request.POST
    typed = {key: post.get(key, "") for key in ("participant_param", "completion_url")}
    before = platform_settings(survey)
    was = (before.participant_param, before.completion_url)
    try:
        platform_update(survey=survey, **typed)
    except ProviderError as error:
        context = _page_context(request, survey, settings_error=str(error), typed=typed)
        return render(request, "annotation/link_platform/survey.html", context)
    messages.success(request, _saved_note(was, platform_settings(survey)))
    return redirect("annotation:link_survey", pk=survey.pk)


def _saved_note(was, platform):
    """What the save changed, in words: a new parameter changes the study URL the platform must be
    given; a new completion URL changes only where participants are sent at the end."""
    param_changed = was[0] != platform.participant_param
    url_changed = was[1] != platform.completion_url
    if param_changed and url_changed:
        return "Saved the participant id parameter and the completion URL: give the platform the new study URL."
    if param_changed:
        return "Saved the participant id parameter: give the platform the new study URL."
    if url_changed:
        return "Saved the completion URL: participants who finish are sent to it. The study URL is unchanged."
    return "Nothing changed: the parameter and the completion URL are as they were."


def _page_context(request, survey, *, settings_error="", typed=None):
    """The page's context; `typed` is a refused settings form's values, shown back beside its error."""
    platform = platform_settings(survey)
    finished = Q(annotator__assignments__hit__survey=survey) & Q(annotator__assignments__status__in=Assignment.FINISHED)
    names = selectors.worker_names(user=request.user, study=survey)
    participants = survey.link_participants.select_related("annotator").annotate(
        tasks=Count("annotator__assignments", filter=finished)
    )
    # confirmed first; within each group by id for the owner, by pseudonym for anyone else
    participants = names.ordered(
        participants.order_by("-confirmed", "participant_id"), annotator_of=attrgetter("annotator")
    )
    participants.sort(key=lambda participant: not participant.confirmed)
    return {
        "survey": survey,
        "platform": platform,
        "entry_url": entry_url(request, survey, platform.participant_param),
        "completion": platform.completion_url.replace("{code}", platform.completion_code),
        "participants": participants,
        "confirmed_count": sum(p.confirmed for p in participants),
        "may_change": selectors.may_change_study(user=request.user, study=survey),
        "settings_error": settings_error,
        "worker_names": names,
        "typed": typed or {"participant_param": platform.participant_param, "completion_url": platform.completion_url},
    }


def _posted_rows(survey, post):
    """The participant ids of the rows a row's button names by row id (`row`): the page's forms carry
    no id, so a page showing pseudonyms leaks none."""
    pks = [int(value) for value in post.getlist("row") if value.isascii() and value.isdigit()]
    return list(survey.link_participants.filter(pk__in=pks).values_list("participant_id", flat=True))


@login_required
@require_POST
def link_action(request, pk):
    """The page's forms: settings (before anyone started), confirm / unconfirm ids."""
    survey = _link_survey(request, pk, change=True)
    post, action = request.POST, request.POST.get("action", "")
    ids = post.getlist("participant") or post.get("ids", "").split() or _posted_rows(survey, post)
    try:
        if action == "settings":  # the form of a page loaded before it posted to the page itself
            return _save_settings(request, survey)
        elif action == "confirm":
            confirmed, unknown = confirm_participants(survey=survey, participant_ids=ids)
            note = f"Confirmed {confirmed} participant(s)."
            if unknown:
                shown = ", ".join(unknown[:UNKNOWN_SHOWN]) + (" …" if len(unknown) > UNKNOWN_SHOWN else "")
                note += f" {len(unknown)} id(s) never opened this survey's link and were ignored: {shown}"
        elif action == "unconfirm":
            note = f"Unconfirmed {unconfirm_participants(survey=survey, participant_ids=ids)} participant(s)."
        else:
            return HttpResponseBadRequest("Unknown action.")
    except ProviderError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, note)
    return redirect("annotation:link_survey", pk=survey.pk)
