"""Wording a draft survey's extra aspects: what each means and what its scale's points are called."""

from django.db import transaction

from annotation.kinds.registry import kind_for
from annotation.models import Aspect, Survey
from annotation.services.surveys import SurveyError
from annotation.services.text.aspect_details import aspect_details_parse


def survey_aspect_scales(*, survey):
    """Each extra aspect's key and (lowest, highest) point, as `aspect_details_parse` reads them."""
    aspects = survey.aspects.exclude(key=Aspect.OVERALL).order_by("position")
    return {a.key: (a.scale_min, a.scale_max) for a in aspects}


@transaction.atomic
def survey_aspects_describe(*, survey, text):
    """Set the definitions and scale labels of a draft rating survey's extra aspects from `text` (one
    line per aspect, see `annotation.services.text.aspect_details`); an aspect without a line gets none (the task page
    then shows 1 = Poor · 5 = Excellent). Refused, changing nothing, on a problem or once launched:
    annotators may have answered the questions as they were worded."""
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    if survey.status != Survey.Status.DRAFT:
        raise SurveyError(
            f"Survey {survey.name!r} is {survey.get_status_display().lower()}: its questions are fixed once it "
            "has been launched."
        )
    if not kind_for(survey).describes_aspects:
        raise SurveyError("Definitions and scale labels are for rating surveys.")
    details, problems = aspect_details_parse(text, survey_aspect_scales(survey=survey))
    if problems:
        raise SurveyError(" ".join(problems))
    aspects = list(survey.aspects.exclude(key=Aspect.OVERALL))
    for aspect in aspects:
        given = details.get(aspect.key, {})
        aspect.definition = given.get("definition", "")
        aspect.scale_labels = given.get("scale_labels", {})
    Aspect.objects.bulk_update(aspects, ["definition", "scale_labels"])
    return survey
