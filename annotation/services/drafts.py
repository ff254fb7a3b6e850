"""Editing a draft survey's settings until it is launched.

A draft has shown nothing to anyone: its HITs, aspects and gold checks are laid out again from the
new settings, exactly as survey_create lays them out, and the survey keeps its row, token and link.
Once launched (`launched_at` is set, and stays set through pauses, closes and reopens) its settings
are fixed: annotators have seen them, and the answers given were given to them.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.kinds.registry import kind_for
from annotation.models import Assignment, Survey
from annotation.services.hits import hits_generate
from annotation.services.surveys import (
    SURVEY_SETTINGS,
    SurveyError,
    default_instructions,
    reference_pairs_problem,
    survey_contents_set,
)


def survey_edit_refusal(*, survey):
    """Why the survey's settings cannot be edited (a sentence), or "" while it is an unlaunched draft."""
    if survey.provider == Survey.Provider.IMPORTED:
        return "An imported survey holds finished judgements: there are no settings to edit."
    if survey.launched_at is not None:
        return (
            f"It was launched on {survey.launched_at:%Y-%m-%d %H:%M} UTC: annotators have seen its settings, "
            "so they stay as they were. Create a new survey to change them."
        )
    if survey.status != Survey.Status.DRAFT:
        return f"It is {survey.get_status_display().lower()}: only a draft's settings can be edited."
    if Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).exists():
        return "Annotators have started on it already: its settings stay as they were."
    return ""


def survey_provider_locked(*, survey):
    """Why the survey's provider cannot change in an edit ("" when it can): a Prolific draft study
    exists on Prolific, or the survey is on MTurk (made by the command, with its own settings)."""
    prolific = getattr(survey, "prolific", None) if survey.provider == Survey.Provider.PROLIFIC else None
    if prolific is not None and prolific.study_id:
        return f"Its draft study {prolific.study_id} exists on Prolific already."
    if survey.provider == Survey.Provider.MTURK:
        return "MTurk surveys are set up by the create_survey command."
    return ""


@transaction.atomic
def survey_edit(
    *, survey, name, systems=None, aspects=(), question=None, scale_labels=None, gold_checks=(), **settings
):
    """Replace a draft survey's settings (the same arguments as survey_create, but the dataset) and
    lay out its HITs again; refuse (SurveyError, nothing changed) once it is launched."""
    unknown = sorted(set(settings) - set(SURVEY_SETTINGS))
    if unknown:
        raise SurveyError(f"Unknown survey setting(s): {', '.join(unknown)}.")
    # Locked (PostgreSQL) against a launch from another tab meanwhile: the launch waits, then
    # launches the edited draft; an edit that waited for a launch is refused.
    survey = Survey.objects.select_for_update().get(pk=survey.pk)
    refusal = survey_edit_refusal(survey=survey)
    if refusal:
        raise SurveyError(f"Survey {survey.name!r} cannot be edited. {refusal}")
    if "provider" in settings and settings["provider"] != survey.provider:
        locked = survey_provider_locked(survey=survey)
        if locked:
            raise SurveyError(f"The survey's provider cannot change: {locked}")
    if Survey.objects.filter(name=name, owner=survey.owner).exclude(pk=survey.pk).exists():
        raise SurveyError(f"A survey named {name!r} already exists.")
    survey.name = name
    for key, value in settings.items():
        setattr(survey, key, value)
    survey.instructions = default_instructions(survey)
    try:
        survey.full_clean(exclude=["owner"])
    except ValidationError as error:
        raise SurveyError("; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())) from error
    kind = kind_for(survey)
    problem = kind.survey_problem(survey) or reference_pairs_problem(
        dataset=survey.dataset, task_type=survey.task_type, reference_pairs=survey.reference_pairs, systems=systems
    )
    if problem:
        raise SurveyError(problem)
    try:
        with transaction.atomic():
            survey.save()
    except IntegrityError:
        raise SurveyError(f"A survey named {name!r} already exists.") from None
    # What survey_create made from the old settings goes; the HITs (with their items) cascade.
    survey.hits.all().delete()
    survey.aspects.all().delete()
    survey.attention_checks.all().delete()
    survey.systems.clear()
    survey_contents_set(
        survey=survey,
        systems=systems,
        aspects=aspects,
        question=question,
        scale_labels=scale_labels,
        gold_checks=gold_checks,
    )
    hits_generate(survey=survey)
    return survey
