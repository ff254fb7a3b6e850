"""The researcher's side of consent and questionnaires: the survey page's panel, the pseudonymised
export, and a participant's deletion on request (own surveys only; staff who may read a survey may
neither download the answers nor delete)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from annotation.models import Annotator, ConsentResponse, ParticipantDeletion, QuestionnaireResponse
from annotation.services import consent as consent_service
from annotation.services.exporting import download_filename
from annotation.views.surveys import survey_or_404

CONTENT_TYPES = {"jsonl": "application/x-ndjson; charset=utf-8", "csv": "text/csv; charset=utf-8"}


def consent_panel(request, survey):
    """The survey page's panel: consent and questionnaires set up, counts, downloads, deletion."""
    setup = consent_service.setup_for(survey)
    mine = survey.owner_id == request.user.pk
    context = {
        "survey": survey,
        "setup": setup,
        "mine": mine,
        "consents": ConsentResponse.objects.filter(survey=survey).values("annotator").distinct().count(),
        "answers": QuestionnaireResponse.objects.filter(survey=survey).count(),
        "deletions": ParticipantDeletion.objects.filter(survey=survey).count(),
    }
    return render_to_string("annotation/consent/panel.html", context, request=request)


@login_required
def questionnaire_export(request, pk, fmt):
    survey = survey_or_404(request, pk, change=True)
    body = consent_service.export_text(survey, fmt)
    response = HttpResponse(body, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = content_disposition_header(
        True, download_filename(survey.name, f"questionnaires.{fmt}")
    )
    return response


def _annotator_named(survey, text):
    """The annotator of `survey` the researcher named by their platform id (or link label), else None."""
    text = (text or "").strip()
    if not text:
        return None
    candidates = Annotator.objects.filter(provider=survey.provider, worker_id=text)
    for annotator in candidates:
        involved = (
            annotator.assignments.filter(hit__survey=survey).exists()
            or ConsentResponse.objects.filter(survey=survey, annotator=annotator).exists()
            or QuestionnaireResponse.objects.filter(survey=survey, annotator=annotator).exists()
        )
        if involved:
            return annotator
    return None


@login_required
@require_http_methods(["GET", "POST"])
def participant_deletion(request, pk):
    """GET: the form (a participant's id) and past deletions. POST `preview`: what would go;
    POST `delete`: removes it and writes the audit line."""
    survey = survey_or_404(request, pk, change=True)
    context = {
        "survey": survey,
        "history": ParticipantDeletion.objects.filter(survey=survey).select_related("requested_by"),
        "participant": "",
        "preview": None,
        "error": "",
    }
    if request.method == "POST":
        participant = request.POST.get("participant", "").strip()[:200]
        context["participant"] = participant
        annotator = _annotator_named(survey, participant)
        if annotator is None:
            context["error"] = (
                f"No participant of this survey has the id {participant!r}: give the id the platform shows "
                "(for Prolific, the participant's Prolific id)."
            )
            return render(request, "annotation/consent/deletion.html", context, status=400)
        preview = consent_service.deletion_preview(survey=survey, annotator=annotator)
        if request.POST.get("action") == "delete" and not preview["refusal"]:
            deletion = consent_service.participant_delete(
                survey=survey, annotator=annotator, requested_by=request.user, note=request.POST.get("note", "")
            )
            messages.success(
                request,
                f"The data of {deletion.pseudonym} was deleted: "
                + ", ".join(f"{count} {what}" for what, count in deletion.removed.items())
                + ". Their ratings are kept under an anonymous id.",
            )
            return redirect("annotation:participant_deletion", pk=survey.pk)
        context["preview"] = preview
        if preview["refusal"]:
            context["error"] = preview["refusal"]
    return render(request, "annotation/consent/deletion.html", context)
