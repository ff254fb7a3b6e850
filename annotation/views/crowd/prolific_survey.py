"""The researcher's Prolific page for a survey: costs and pay check, study controls, review."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Prefetch, Q
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from annotation import selectors
from annotation.crowd.base import MAX_AMOUNT, ProviderError, new_bonus_key, posted_bonus_key, typed_number
from annotation.crowd.blocks import blocks_applying_to
from annotation.crowd.prolific.blocklist import participant_block
from annotation.crowd.prolific.bonus import bonus_state
from annotation.crowd.prolific.codes import code_state
from annotation.crowd.prolific.pay import HOURLY_FLOOR_CENTS, floor_problem, hourly_cents, money
from annotation.crowd.prolific.provider import ProlificProvider
from annotation.crowd.prolific.review import MIN_REJECT_MESSAGE, REJECTION_CATEGORIES
from annotation.crowd.prolific.study import pay_check, setup_problems, slot_count, study_settings
from annotation.models import Assignment, ProlificBlockList, ProlificBonus, Survey
from annotation.services import surveys as survey_services
from annotation.services.estimates import survey_estimate_for
from annotation.services.reviews import annotators_excluded

MAX_MINUTES = 24 * 60  # one participant's estimated time; the column (an integer) takes no more than 2**31 - 1


def _own_survey(request, pk, *, change=False):
    # Staff read every study but change none of others': a write looks the survey up among the
    # changeable ones, so staff get the 404 another researcher gets.
    surveys = selectors.surveys_changeable_by if change else selectors.surveys_visible_to
    return get_object_or_404(surveys(user=request.user), pk=pk, provider=Survey.Provider.PROLIFIC)


def _submissions(study):
    finished = Q(annotator__assignments__hit__survey=study.survey) & Q(
        annotator__assignments__status__in=Assignment.FINISHED
    )
    return (
        study.submissions.select_related("annotator")
        .annotate(tasks=Count("annotator__assignments", filter=finished))
        .prefetch_related(Prefetch("bonuses", queryset=ProlificBonus.objects.order_by("created_at", "pk")))
    )


def _bonus_states(submissions, currency):
    """Each submission's bonuses as the page says them: paid, waiting for Prolific, or not paid.

    A bonus whose pay call's answer was lost is never sent again on its own, so the page is where
    the researcher sees it waiting (and, past an hour, that it was probably not paid)."""
    for row in submissions:
        row.bonus_states = [bonus_state(bonus, currency=currency) for bonus in row.bonuses.all()]
    return submissions


def _code_states(study, submissions):
    """Each submission's completion code as Prolific listed it, with what it is (see prolific_codes)."""
    for row in submissions:
        row.code = code_state(study, row.study_code)
    return submissions


@login_required
def prolific_survey(request, pk):
    survey = _own_survey(request, pk)
    study = study_settings(survey)
    cost, cost_error = None, ""
    if request.GET.get("cost"):
        try:
            cost = ProlificProvider().cost_preview(survey=survey)
        except ProviderError as error:
            cost_error = str(error)
    submissions = _code_states(study, _bonus_states(list(_submissions(study)), study.currency))
    _mark_reviewed(survey, submissions)
    places = slot_count(survey)
    task_minutes = survey_estimate_for(survey=survey)["minutes_per_hit"]
    context = {
        "survey": survey,
        "study": study,
        "places": places,
        "rewards_total": money(study.reward_cents * places, study.currency),
        "reward": money(study.reward_cents, study.currency),
        "reward_amount": f"{study.reward_cents / 100:.2f}",
        "hourly": money(round(hourly_cents(study.reward_cents, study.estimated_minutes)), study.currency),
        "pay": pay_check(study),
        "top_up": money(pay_check(study)["top_up_cents"], study.currency),
        "cost": money(cost["total_cost_cents"], study.currency) if cost else "",
        "cost_error": cost_error,
        "setup_problems": setup_problems(),
        # Prolific pays in the workspace's currency, whatever is chosen here: publishing checks the
        # choice against the workspace only where the server names it.
        "currency_checked": bool(settings.PROLIFIC_WORKSPACE_ID),
        "server_currency": settings.PROLIFIC_CURRENCY,
        # The layout's own time per task, beside the estimate Prolific is given (a default of 10
        # minutes otherwise): the researcher sets the estimate knowing what a participant will do.
        "task_minutes": task_minutes,
        # The reward pays a participant's whole submission, however many tasks they do in it: what it
        # comes to for one who does as many as the survey allows, in the time that takes.
        "most": _pay_at_most(study, survey, task_minutes),
        # What the study can still do, as Prolific last said (a stopped study cannot restart).
        "stopped": study.status == "COMPLETED" or survey.status == Survey.Status.CLOSED,
        "paused": study.status == "PAUSED" or survey.status == Survey.Status.PAUSED,
        "submissions": submissions,
        "confirmed_count": sum(s.confirmed for s in submissions),
        "categories": REJECTION_CATEGORIES,
        "min_reject": MIN_REJECT_MESSAGE,
        # A fresh key per page: the same form sent twice (retry, double click) pays one bonus.
        "bonus_key": new_bonus_key(),
        "block_list": ProlificBlockList.objects.filter(owner=survey.owner_id).values_list("group_id", flat=True).first()
        if survey.owner_id
        else "",
        "worker_names": selectors.worker_names(user=request.user, study=survey),
    }
    return render(request, "annotation/prolific/survey.html", context)


def _pay_at_most(study, survey, task_minutes):
    """A participant's pay per task and per hour when they do every task the survey allows them
    (Max HITs per annotator) in the layout's estimated time per task, and the floor it falls under."""
    tasks = survey.max_hits_per_annotator
    minutes = tasks * task_minutes
    hourly = hourly_cents(study.reward_cents, minutes) if minutes > 0 else None
    problem = ""
    if hourly is not None and study.currency in HOURLY_FLOOR_CENTS and hourly < HOURLY_FLOOR_CENTS[study.currency]:
        problem = (
            f"under Prolific's floor of {money(HOURLY_FLOOR_CENTS[study.currency], study.currency)} an hour: raise "
            "the reward, or pay those who do many tasks a bonus"
        )
    return {
        "tasks": tasks,
        "minutes": round(minutes),
        "per_task": money(round(study.reward_cents / tasks), study.currency),
        "hourly": money(round(hourly), study.currency) if hourly is not None else "",
        "problem": problem,
    }


def _mark_reviewed(survey, submissions):
    """Whether the participant's work is excluded here or they are blocked, so the row says what
    was done, and which review actions still apply (their bonuses: `_bonus_states`)."""
    excluded = annotators_excluded(survey=survey)
    blocked = set(
        blocks_applying_to(survey.owner_id)
        .filter(annotator__in=[row.annotator_id for row in submissions])
        .values_list("annotator_id", flat=True)
    )
    for row in submissions:
        row.excluded = row.annotator_id in excluded
        row.blocked = row.annotator_id in blocked
        row.reviewable = row.confirmed and row.tasks and row.status == "AWAITING REVIEW"
        row.payable = row.confirmed and row.tasks and row.status in ("AWAITING REVIEW", "APPROVED")


def _save_settings(study, post):
    """Reward, time and currency, while the study is not on Prolific yet (Prolific fixes them then)."""
    if study.study_id:
        raise ProviderError("The study is on Prolific already: change its reward there.")
    reward = round(typed_number(post.get("reward", ""), what="The reward", most=MAX_AMOUNT) * 100)
    try:
        minutes = int(post.get("minutes", ""))
    except ValueError:
        raise ProviderError("Reward must be an amount such as 2.50 and minutes a whole number.") from None
    if minutes > MAX_MINUTES:
        raise ProviderError(f"The time must be at most {MAX_MINUTES} minutes (a day), not {minutes}.")
    currency = post.get("currency", "")
    if reward <= 0 or minutes <= 0 or currency not in ("GBP", "USD"):
        raise ProviderError("Reward and minutes must be more than 0, and the currency GBP or USD.")
    study.reward_cents, study.estimated_minutes, study.currency = reward, minutes, currency
    study.save(update_fields=["reward_cents", "estimated_minutes", "currency"])
    problem = floor_problem(reward, minutes, currency)
    return "Saved." + (f" Note: {problem}" if problem else "")


def _submission_pk(post):
    """The submission a button names: its row id (Django's own words for a bad one are no message)."""
    value = post.get("submission", "")
    if not value.isdigit():
        raise ProviderError("Choose a participant's submission from the list (none was named).")
    return int(value)


def _slot_of(survey, submission_pk, names):
    study = study_settings(survey)
    row = get_object_or_404(study.submissions.select_related("annotator"), pk=submission_pk)
    slot = Assignment.objects.filter(
        hit__survey=survey, annotator=row.annotator, status__in=Assignment.FINISHED
    ).first()
    if slot is None:
        raise ProviderError(f"{names.of(row.annotator)} has handed in no work in this survey yet.")
    return row, slot


def _study_move(survey, action, provider):
    """Pause, resume or stop the survey and its study together. Where the survey is in that state
    already (the study was changed in Prolific's own app), only the study is asked to follow."""
    change, settled, follow = {
        "pause": (survey_services.survey_pause, Survey.Status.PAUSED, provider.pause),
        "resume": (survey_services.survey_launch, Survey.Status.LIVE, provider.resume),
        "stop": (survey_services.survey_close, Survey.Status.CLOSED, provider.expire),
    }[action]
    if survey.status == settled:
        follow(survey=survey)
        return survey
    return change(survey=survey)


# What each irreversible action does on Prolific: a first POST shows it on a page of its own; only
# the POST from that page's button (confirm=yes) acts, as on the MTurk page. A form re-sent from the
# history, or a click on a half-read row, would otherwise stop a study Prolific cannot restart.
IRREVERSIBLE = {
    "stop": (
        "The study is stopped on Prolific for good (Prolific cannot restart a stopped study) and the survey is "
        "closed: nobody new is recruited. Participants already in it may still finish."
    ),
    "reject": (
        "The submission is rejected on Prolific: the participant loses their reward and the rejection counts "
        "against them there. Excluding their ratings on the quality page instead costs them nothing."
    ),
    "block": (
        "The participant's ratings are left out of every analysis of this survey (undo on the quality page), "
        "they are refused work in your later RateLab surveys, and they are added to your block list on "
        "Prolific, which every later Prolific study of yours excludes: RateLab cannot take them off it again."
    ),
}
# The fields a confirmed action carries over from the form that asked for it.
CARRIED_FIELDS = ("submission", "category", "message", "reason")


def _confirm_page(request, survey, action, names):
    """The question before an irreversible action; ProviderError when the form names no submission."""
    participant = ""
    if action == "reject":
        row, _ = _slot_of(survey, _submission_pk(request.POST), names)  # the row's own message when it has no work
        participant = names.of(row.annotator)
    elif action == "block":
        submissions = study_settings(survey).submissions.select_related("annotator")
        row = get_object_or_404(submissions, pk=_submission_pk(request.POST))
        participant = names.of(row.annotator)
    carried = [(name, request.POST[name]) for name in CARRIED_FIELDS if name in request.POST]
    context = {
        "survey": survey,
        "action": action,
        "consequence": IRREVERSIBLE[action],
        "participant": participant,
        "carried": carried,
    }
    return render(request, "annotation/prolific/confirm.html", context)


@login_required
@require_POST
def prolific_action(request, pk):
    """One POST endpoint for the page's buttons; each action makes one provider call."""
    survey = _own_survey(request, pk, change=True)
    provider, post, action = ProlificProvider(), request.POST, request.POST.get("action", "")
    # Participants named in the messages as on the page: real ids for the owner only.
    names = selectors.worker_names(user=request.user, study=survey)
    try:
        if action in IRREVERSIBLE and post.get("confirm") != "yes":
            return _confirm_page(request, survey, action, names)
        if action == "settings":
            note = _save_settings(study_settings(survey), post)
        elif action == "publish":
            if survey.status == Survey.Status.LIVE:
                provider.publish(survey=survey)  # live already (e.g. from the command line), not on Prolific yet
            else:
                survey_services.survey_launch(survey=survey)
            note = "Published on Prolific."
        elif action in {"pause", "resume", "stop"}:
            # The survey and its study move together: a survey live in RateLab on a paused or
            # stopped study (or the other way round) hands out work nobody is sent to, or the reverse.
            survey = _study_move(survey, action, provider)
            note = (
                f"The survey is {survey.get_status_display().lower()}; Prolific says the study is "
                f"{(study_settings(survey).status or 'updated').lower()}."
            )
        elif action == "places":
            if not post.get("places", "").strip().isdigit():
                raise ProviderError("Places must be a whole number, such as 40.")
            provider.add_places(survey=survey, places=int(post["places"]))
            note = f"The study now has {post.get('places')} places."
        elif action == "sync":
            summary = provider.sync(survey=survey)
            note = f"Prolific listed {summary['listed']} submissions; {summary['confirmed']} confirmed."
        elif action in {"approve", "reject", "bonus"}:
            if action == "bonus":  # read before the submission: a bad amount is the message, not a 404
                cents = round(typed_number(post.get("amount") or 0, what="The bonus", most=MAX_AMOUNT) * 100)
            row, slot = _slot_of(survey, _submission_pk(post), names)
            if action == "approve":
                provider.approve(assignment=slot)
            elif action == "reject":
                provider.reject(assignment=slot, reason=post.get("message", ""), category=post.get("category", ""))
            else:
                key = f"page-{posted_bonus_key(post)}-{row.pk}"
                bonus = provider.bonus(assignment=slot, amount_cents=cents, reason="", key=key)
                if bonus.amount_cents != cents:
                    # The same form sent again with another amount (back, edit, send): the form's
                    # bonus stands; said in words, so the new amount is not taken for paid.
                    raise ProviderError(
                        f"This form already paid {names.of(row.annotator)} a bonus of "
                        f"{money(bonus.amount_cents, study_settings(survey).currency)}; nothing more was sent. "
                        "Pay a further bonus from the page as it is now."
                    )
            note = f"{action.capitalize()}: {names.of(row.annotator)}."
        elif action == "block":
            study = study_settings(survey)
            row = get_object_or_404(
                study.submissions.select_related("annotator", "study__survey"), pk=_submission_pk(post)
            )
            group = participant_block(
                client=provider.client, submission=row, reason=post.get("reason", ""), user=request.user
            )
            note = f"{names.of(row.annotator)}: work excluded, blocked here and in Prolific participant group {group}."
        else:
            return HttpResponseBadRequest("Unknown action.")
    except (ProviderError, survey_services.SurveyError, ValueError) as error:  # QualityError is a ValueError
        messages.error(request, str(error))
    else:
        messages.success(request, note)
    return redirect("annotation:prolific_survey", pk=survey.pk)
