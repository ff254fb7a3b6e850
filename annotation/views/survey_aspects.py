"""The page that describes a draft rating survey's extra aspects: a definition and scale labels each."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from annotation import selectors, services
from annotation.kinds.rating.forms import AspectDetailsForm
from annotation.models import Aspect
from annotation.services.text.aspect_details import aspect_details_text


@login_required
@require_http_methods(["GET", "POST"])
def survey_aspects(request, pk):
    """A draft rating survey's aspect definitions and scale labels, changed before it is launched."""
    # only one's own survey (others' are a 404, as on every survey page); the service refuses a launched one
    survey = get_object_or_404(selectors.surveys_changeable_by(user=request.user), pk=pk)
    scales = services.survey_aspect_scales(survey=survey)
    current = survey.aspects.exclude(key=Aspect.OVERALL).order_by("position")
    initial = {"aspect_details": aspect_details_text((a.key, a.definition, a.scale_labels) for a in current)}
    form = AspectDetailsForm(request.POST or None, scales=scales, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.survey_aspects_describe(survey=survey, text=form.cleaned_data["aspect_details"])
        except services.SurveyError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Survey {survey.name}: the aspects' definitions and labels are saved.")
            return redirect("annotation:survey_detail", pk=pk)
    return render(request, "annotation/surveys/aspects.html", {"survey": survey, "form": form, "scales": scales})
