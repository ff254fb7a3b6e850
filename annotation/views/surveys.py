"""The researcher's survey pages: create, preview, launch/pause/close, progress, review, export."""

from operator import itemgetter

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors, services
from annotation.crowd.base import ProviderError
from annotation.crowd.link_platform import platform_settings
from annotation.crowd.prolific.study import study_settings
from annotation.forms.consent import ConsentForm
from annotation.forms.surveys import SurveyForm
from annotation.kinds.registry import kind_for, kind_named
from annotation.models import Annotator, Assignment, MTurkHIT, ProlificStudy, Survey
from annotation.quality.selectors import cached_report
from annotation.quality.services import quality_queue_recompute
from annotation.selectors import studies as selectors_studies
from annotation.services.consent import consent_setup_save
from annotation.services.exporting import REAL_IDS_HEADER, REAL_IDS_SUFFIX, download_filename
from annotation.services.extensions.points import survey_panels
from annotation.services.reviews import annotators_excluded
from annotation.views.task_page.display import task_context
from annotation.views.task_page.items import survey_scales


def survey_or_404(request, pk, *, change=False):
    """The survey `pk` as this user may read it (or change it), else a 404."""
    # Others' surveys are a 404, not a 403: their existence is not revealed either; a survey one
    # may read but not change (staff) is a 404 to every write, too.
    surveys = selectors.surveys_changeable_by if change else selectors.surveys_visible_to
    return get_object_or_404(surveys(user=request.user), pk=pk)


def posted_pk(request, field):
    """The row id a review form names in `field`, or None: anything but ASCII digits (a tampered
    form) would otherwise reach the database lookup and end as a server error."""
    value = request.POST.get(field, "")
    return int(value) if value.isascii() and value.isdigit() else None


def _link(request, survey):
    return request.build_absolute_uri(f"/s/{survey.token}/")


@login_required
def survey_list(request):
    # Imported surveys are listed too (marked so, with their counts instead of HIT progress): a
    # researcher looking for one after Upload ratings otherwise found it only on its dataset's page.
    surveys = selectors.surveys_visible_to(user=request.user)
    surveys = selectors_studies.surveys_with_progress(surveys.order_by("-created_at", "-pk"))
    return render(request, "annotation/surveys/list.html", {"surveys": surveys})


@login_required
def survey_new(request):
    datasets = selectors.datasets_changeable_by(user=request.user)
    form = SurveyForm(
        request.POST or None, datasets=datasets, owner=request.user, initial={"dataset": request.GET.get("dataset")}
    )
    consent_form = ConsentForm(request.POST or None, provider=request.POST.get("provider"))
    estimate = None
    consent_valid = consent_form.is_valid() if request.method == "POST" else False
    if request.method == "POST" and form.is_valid() and consent_valid:
        data = form.cleaned_data
        n_systems = len(data["system_names"]) or data["dataset"].systems.count()
        estimate = services.survey_estimate(
            n_contexts=kind_named(data["task_type"]).planned_units(data["dataset"]),
            n_systems=n_systems,
            n_aspects=1 + len(data["aspect_keys"]),
            n_gold_checks=len(data["gold"]),
            **form.settings(),
        )
        if "estimate" not in request.POST:
            try:
                common = dict(
                    dataset=data["dataset"],
                    name=data["name"],
                    owner=request.user,
                    systems=data["system_names"],
                    aspects=data["aspect_specs"],
                    gold_checks=data["gold"],
                    question=data["question"] or None,
                    **form.settings(),
                )
                kind = kind_named(data["task_type"])
                survey = kind.form_create(data=data, common=common) or services.survey_create(**common)
                consent_setup_save(survey=survey, **consent_form.setup_values())
            except (services.SurveyError, services.HITLayoutError) as error:
                form.add_error(None, str(error))
            else:
                if estimate["gold_short"]:
                    messages.warning(request, estimate["gold_short"])
                if survey.provider == Survey.Provider.PROLIFIC:
                    study_settings(survey)  # the study's pay row, with its completion codes, to edit before publishing
                    messages.success(
                        request,
                        f"Survey {survey.name} created as a draft. Preview it, then open its Prolific page to set the "
                        "reward and estimated time and publish the study.",
                    )
                    return redirect("annotation:survey_detail", pk=survey.pk)
                if survey.provider == Survey.Provider.LINK:
                    platform_settings(survey)  # the platform's row; its completion URL is set on the link page
                    messages.success(
                        request,
                        f"Survey {survey.name} created as a draft. Open its link platform page to set the participant "
                        "id's parameter and the platform's completion URL, then launch and give the platform the "
                        "study URL.",
                    )
                    return redirect("annotation:survey_detail", pk=survey.pk)
                messages.success(request, f"Survey {survey.name} created as a draft. Preview it, then launch.")
                return redirect("annotation:survey_detail", pk=survey.pk)
    context = {"form": form, "consent_form": consent_form, "estimate": estimate, "has_datasets": datasets.exists()}
    return render(request, "annotation/surveys/new.html", context)


def _progress(survey):
    """The survey's live numbers, with whether the exclusions shown are those its answers call for.

    They come from the quality report; a stale one is queued for a recompute (debounced; with eager
    Celery, development only, it runs now), as the quality pages do. Without this the page said
    "0 excluded" after new work until someone opened Quality. A recompute that ran at once (outside a
    transaction, as in development) changed the exclusions: they are counted again.
    """
    progress = selectors_studies.survey_progress(survey=survey)
    fresh = True
    if progress["ratings"]:
        _, fresh = cached_report(survey=survey)
        if not fresh:
            quality_queue_recompute(survey=survey)
            _, fresh = cached_report(survey=survey)
            if fresh:
                progress["excluded"] = len(annotators_excluded(survey=survey))
    progress["exclusions_current"] = fresh
    return progress


@login_required
def survey_detail(request, pk):
    survey = survey_or_404(request, pk)
    progress = _progress(survey)
    names = selectors.worker_names(user=request.user, study=survey)
    annotators = names.ordered(selectors_studies.survey_annotators(survey=survey), annotator_of=itemgetter("annotator"))
    return render(
        request,
        "annotation/surveys/detail.html",
        {
            "survey": survey,
            "link": _link(request, survey),
            "progress": progress,
            "annotators": annotators,
            "estimate": services.survey_estimate_for(survey=survey),
            "aspects": survey.aspects.all(),
            "scales": survey_scales(survey),  # each question as annotators read it: definition, scale ends
            "reopen_refusal": services.survey_reopen_refusal(survey=survey),
            # Staff may read every survey but change only their own: show them no buttons that 404.
            "may_change": selectors.may_change_study(user=request.user, study=survey),
            "panels": survey_panels(request, survey),  # e.g. analysis's planning panel
            "worker_names": names,
        },
    )


@login_required
def survey_progress_json(request, pk):
    survey = survey_or_404(request, pk)
    # The page polls this: a recompute queued now answers a later poll.
    return JsonResponse(_progress(survey))


ACTIONS = {
    "launch": services.survey_launch,
    "pause": services.survey_pause,
    "close": services.survey_close,
    "reopen": services.survey_reopen,
}
DONE = {"launch": "launched", "pause": "paused", "close": "closed", "reopen": "reopened"}
# Actions a researcher confirms on a page of their own first: a GET or a first POST shows what will
# happen; only a POST carrying confirm=yes (from that page's button) does it.
NEEDS_CONFIRMATION = {"close"}


def _close_consequences(survey):
    """What closing does, in this survey's case: a draft never put on its platform has nothing there
    to expire, and a link platform's study is the researcher's to stop (RateLab cannot reach it)."""
    if survey.provider == Survey.Provider.IMPORTED:
        return ["Nothing changes in its judgements: an imported survey is never handed out."]
    never_launched = survey.launched_at is None
    draft = ["It was never launched: no annotator has had work from it."] if never_launched else []
    if survey.provider == Survey.Provider.LOCAL:
        return [
            *draft,
            "Annotators opening the link get no new work; work in progress can still be submitted.",
            "You can reopen a closed local survey later (it comes back "
            + ("a draft)." if never_launched else "paused)."),
        ]
    final = "This cannot be undone: a closed crowd-platform survey cannot be reopened."
    if survey.provider == Survey.Provider.LINK:
        platform = (
            "If you gave the platform its study URL, take the study down there: RateLab cannot reach the platform."
            if never_launched
            else "Participants the platform sends get no new work; work in progress can still be submitted. Stop "
            "the study on the platform too: RateLab cannot reach it."
        )
        return [*draft, platform, final]
    if survey.provider == Survey.Provider.PROLIFIC:
        study = ProlificStudy.objects.filter(survey=survey).first()
        if study is None or not study.study_id:
            return [*draft, "No study exists on Prolific for it: nothing is sent to Prolific.", final]
        if never_launched:
            where = f"Its draft study on Prolific ({study.study_id}, never published) is stopped."
        else:
            where = f"Its study on Prolific ({study.study_id}) is stopped: nobody new is recruited."
        return [*draft, where, final]
    published = MTurkHIT.objects.filter(hit__survey=survey).count() if survey.provider == Survey.Provider.MTURK else 1
    if not published:
        return [*draft, f"None of its HITs is on {survey.get_provider_display()}: nothing is sent there.", final]
    return [
        *draft,
        f"Its HITs are expired on {survey.get_provider_display()}: workers can no longer take them.",
        final,
    ]


@login_required
@require_http_methods(["GET", "POST"])
def survey_action(request, pk, action):
    survey = survey_or_404(request, pk, change=True)
    if action not in ACTIONS:
        return redirect("annotation:survey_detail", pk=pk)
    if action in NEEDS_CONFIRMATION and not (request.method == "POST" and request.POST.get("confirm") == "yes"):
        if survey.status == Survey.Status.CLOSED:
            messages.info(request, f"Survey {survey.name} is already closed.")
            return redirect("annotation:survey_detail", pk=pk)
        context = {"survey": survey, "action": action, "consequences": _close_consequences(survey)}
        return render(request, "annotation/surveys/confirm.html", context)
    if request.method != "POST":
        return redirect("annotation:survey_detail", pk=pk)
    resuming = action == "launch" and survey.status == Survey.Status.PAUSED
    try:
        ACTIONS[action](survey=survey)
    except (services.SurveyError, ProviderError) as error:  # a crowd provider's refusal, e.g. Prolific's pay floor
        messages.error(request, str(error))
    else:
        note = " It is paused: resume it to hand out work again." if action == "reopen" else ""
        messages.success(request, f"Survey {survey.name} {'resumed' if resuming else DONE[action]}.{note}")
    return redirect("annotation:survey_detail", pk=pk)


@login_required
def survey_preview(request, pk):
    """The first HIT exactly as an annotator sees it; the form accepts nothing."""
    survey = survey_or_404(request, pk)
    hit = survey.hits.first()
    if hit is None:
        messages.error(request, "This survey has no HITs to preview.")
        return redirect("annotation:survey_detail", pk=pk)
    context = task_context(
        survey=survey,
        hit=hit,
        preview=True,
        progress={"hit_number": 1, "max_hits": min(survey.max_hits_per_annotator, survey.hits.count())},
    )
    # The annotator's page inside the researcher's frame: the top bar and a way back to the survey.
    return render(request, "annotation/surveys/preview.html", context)


@login_required
def survey_annotator(request, pk, annotator_pk):
    survey = survey_or_404(request, pk)
    annotator = get_object_or_404(Annotator.objects.filter(assignments__hit__survey=survey).distinct(), pk=annotator_pk)
    work = selectors_studies.annotator_work(survey=survey, annotator=annotator)
    names = selectors.worker_names(user=request.user, study=survey)
    context = {"survey": survey, "annotator": annotator, "worker_names": names, **work}
    return render(request, "annotation/surveys/annotator.html", context)


@login_required
@require_POST
def survey_review(request, pk, annotator_pk):
    """approve/reject one assignment, or exclude/include the annotator; the reason goes to the audit trail."""
    survey = survey_or_404(request, pk, change=True)
    annotator = get_object_or_404(Annotator.objects.filter(assignments__hit__survey=survey).distinct(), pk=annotator_pk)
    action = request.POST.get("action", "")
    reason = request.POST.get("reason", "")
    assignment_pk = posted_pk(request, "assignment")
    if action in ("approve", "reject") and assignment_pk is None:
        messages.error(request, "Choose a task from the list: the form named none.")
        return redirect("annotation:survey_annotator", pk=pk, annotator_pk=annotator_pk)
    if action == "reject" and request.POST.get("confirm") != "yes":
        # Rejecting is irreversible on a crowd platform (no pay, a mark on the worker's record):
        # say so and ask first; the confirmation page posts the same fields with confirm=yes.
        assignment = get_object_or_404(
            Assignment.objects.select_related("hit"),
            pk=assignment_pk,
            hit__survey=survey,
            annotator=annotator,
        )
        context = {
            "survey": survey,
            "annotator": annotator,
            "assignment": assignment,
            "reason": reason,
            "worker_names": selectors.worker_names(user=request.user, study=survey),
        }
        return render(request, "annotation/surveys/confirm_reject.html", context)
    try:
        if action in ("approve", "reject"):
            assignment = get_object_or_404(Assignment, pk=assignment_pk, hit__survey=survey, annotator=annotator)
            services.assignment_review(assignment=assignment, action=action, actor=request.user, reason=reason)
        elif action == "exclude":
            services.annotator_exclude(survey=survey, annotator=annotator, actor=request.user, reason=reason)
        elif action == "include":
            services.annotator_include(survey=survey, annotator=annotator, actor=request.user, reason=reason)
        else:
            raise services.ReviewError(f"Unknown action {action!r}.")
    except services.ReviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{action.capitalize()}: recorded.")
    return redirect("annotation:survey_annotator", pk=pk, annotator_pk=annotator_pk)


@login_required
def survey_export(request, pk, fmt="jsonl"):
    """The survey's ratings (JSONL or CSV), workers as dataset pseudonyms; `?ids=real` (owner only) gives real ids."""
    survey = survey_or_404(request, pk)
    real_ids = request.GET.get("ids") == "real"
    if real_ids and not selectors.may_see_real_worker_ids(user=request.user, study=survey):
        raise Http404("Real worker ids are for the survey's owner only.")
    response = HttpResponse(content_type="text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson")
    kind = kind_for(survey)
    kind.export(dataset=survey.dataset, survey=survey, stream=response, fmt=fmt, real_ids=real_ids)
    what = kind.export_name
    filename = download_filename(survey.name, f"{what}-{REAL_IDS_SUFFIX}.{fmt}" if real_ids else f"{what}.{fmt}")
    response["Content-Disposition"] = content_disposition_header(True, filename)
    response[REAL_IDS_HEADER] = "real" if real_ids else "pseudonymised"
    return response
