"""The planning panel's "Add N ratings per response": a page that says what it adds and costs, then the extension."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.crowd.base import ProviderError
from annotation.services.extend import survey_extend, survey_extend_preview
from annotation.views.surveys import survey_or_404


@login_required
@require_POST
def survey_extend_view(request, pk):
    """Add ratings per response (assignments per HIT) on the survey's provider: the planning panel's button.

    It adds paid work, so the panel's POST only shows what would be added, its cost on the survey's
    provider and its time; the POST from that page's button (confirm=yes) extends. The number of
    assignments the page showed travels with it: a second click finds the survey extended already
    and adds nothing."""
    survey = survey_or_404(request, pk, change=True)
    try:
        per_hit, seen = int(request.POST.get("per_hit", "")), int(request.POST.get("from_assignments", ""))
    except ValueError:
        messages.error(request, "Say how many ratings per response to add (a whole number).")
        return redirect("annotation:survey_detail", pk=pk)
    try:
        if request.POST.get("confirm") != "yes":
            preview = survey_extend_preview(survey=survey, per_hit=per_hit, from_assignments=seen)
            context = {"survey": survey, "preview": preview, "from_assignments": seen}
            return render(request, "annotation/surveys/confirm_extend.html", context)
        result = survey_extend(survey=survey, per_hit=per_hit, from_assignments=seen)
    except ProviderError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            f"Survey {survey.name} extended: {result['added']:,} more assignments, "
            f"{result['assignments_per_hit']} per HIT now.",
        )
    return redirect("annotation:survey_detail", pk=pk)
