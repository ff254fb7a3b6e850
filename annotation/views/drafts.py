"""Editing a draft survey's settings: the create form, filled in; after launch the page says why not."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import services
from annotation.crowd.link_platform import platform_settings
from annotation.crowd.prolific.study import study_settings
from annotation.forms.consent import ConsentForm
from annotation.forms.drafts import SurveyEditForm
from annotation.kinds.registry import kind_named
from annotation.models import Survey, SurveyConsent
from annotation.services.consent import consent_setup_save
from annotation.services.drafts import survey_edit as survey_edit_service
from annotation.services.drafts import survey_edit_refusal


@login_required
@require_http_methods(["GET", "POST"])
def survey_edit(request, pk):
    """GET: the draft's settings in the create form; POST: save them (Estimate only estimates).
    The owner's alone: anyone else meets a 404, staff included."""
    survey = get_object_or_404(Survey.objects.filter(owner=request.user).select_related("dataset"), pk=pk)
    refusal = survey_edit_refusal(survey=survey)
    if refusal:
        status = 409 if request.method == "POST" else 200
        return render(request, "annotation/surveys/edit.html", {"survey": survey, "refusal": refusal}, status=status)
    form = SurveyEditForm(request.POST if request.method == "POST" else None, survey=survey)
    # consent and questionnaires: their own form and section, prefilled from the draft's setup
    consent_form = ConsentForm(
        request.POST if request.method == "POST" else None,
        provider=survey.provider,
        setup=SurveyConsent.objects.filter(survey=survey).first(),
    )
    consent_valid = consent_form.is_valid() if request.method == "POST" else False
    estimate = None
    if request.method == "POST" and form.is_valid() and consent_valid:
        data = form.cleaned_data
        n_systems = len(data["system_names"]) or survey.dataset.systems.count()
        estimate = services.survey_estimate(
            n_contexts=kind_named(data["task_type"]).planned_units(survey.dataset),
            n_systems=n_systems,
            n_aspects=1 + len(data["aspect_keys"]),
            n_gold_checks=len(data["gold"]),
            **form.settings(),
        )
        if "estimate" not in request.POST:
            try:
                survey = survey_edit_service(
                    survey=survey,
                    name=data["name"],
                    systems=data["system_names"],
                    aspects=data["aspect_specs"],
                    gold_checks=data["gold"],
                    question=data["question"] or None,
                    **form.settings(),
                )
                consent_setup_save(survey=survey, **consent_form.setup_values())
            except (services.SurveyError, services.HITLayoutError) as error:
                form.add_error(None, str(error))
            else:
                if survey.provider == Survey.Provider.PROLIFIC:
                    study_settings(survey)
                elif survey.provider == Survey.Provider.LINK:
                    platform_settings(survey)
                if estimate["gold_short"]:
                    messages.warning(request, estimate["gold_short"])
                messages.success(request, f"Draft {survey.name} saved with its new settings. Preview it, then launch.")
                return redirect("annotation:survey_detail", pk=survey.pk)
    context = {"survey": survey, "form": form, "consent_form": consent_form, "estimate": estimate}
    return render(request, "annotation/surveys/edit.html", context)
