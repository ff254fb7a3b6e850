"""The survey form for editing a draft: the create form, filled from the survey, its dataset fixed."""

from django import forms

from annotation.forms.surveys import SurveyForm
from annotation.kinds.registry import kind_for
from annotation.models import Aspect, Dataset, Survey
from annotation.services.drafts import survey_provider_locked
from annotation.services.text.aspect_details import aspect_details_text


def _gold_lines(survey):
    """The survey's gold checks as the form's lines (`turns => response => scores`)."""
    lines = []
    for check in survey.attention_checks.order_by("pk"):
        turns = " | ".join(str(turn) for turn in check.turns or [])
        scores = ",".join(str(score) for score in check.accepted_scores)
        lines.append(f"{turns} => {check.response_text} => {scores}")
    return "\n".join(lines)


def survey_initial(survey):
    """The create form's fields as the survey has them now."""
    aspects = list(survey.aspects.order_by("position"))
    overall = next((a for a in aspects if a.key == Aspect.OVERALL), None)
    extra = [a for a in aspects if a.key != Aspect.OVERALL]
    defaults = kind_for(survey).default_aspects(survey.dataset)
    if defaults and [a.key for a in extra] == [d["key"] for d in defaults[1:]]:
        extra = []  # the kind's own questions: an empty field asks them again, scales and flags as they were
    initial = {name: getattr(survey, name) for name in SurveyForm.SETTINGS if hasattr(survey, name)}
    initial.update(
        dataset=survey.dataset_id,
        name=survey.name,
        systems=list(survey.systems.order_by("name").values_list("name", flat=True)),
        question=overall.question if overall else "",
        aspects=", ".join(a.key for a in extra),
        aspect_details=aspect_details_text((a.key, a.definition, a.scale_labels) for a in extra),
        gold_checks=_gold_lines(survey),
        write_system_name=survey.write_system_name,
    )
    initial.update(kind_for(survey).form_initial(survey))
    return initial


class SurveyEditForm(SurveyForm):
    """SurveyForm for one draft: its dataset cannot change (the survey's HITs and checks are laid
    out over it), nor its provider once a platform holds something of it; its own name is free."""

    def __init__(self, data=None, *, survey, **kwargs):
        if data is not None:
            data = data.copy()
            data["dataset"] = str(survey.dataset_id)  # fixed: the disabled field is not posted
        super().__init__(
            data,
            datasets=Dataset.objects.filter(pk=survey.dataset_id),
            owner=survey.owner,
            initial=survey_initial(survey),
            **kwargs,
        )
        self.survey = survey
        self.fields["dataset"].disabled = True
        self.fields["dataset"].help_text = "A draft keeps its dataset: create a new survey for another one."
        provider = self.fields["provider"]
        if survey.provider not in dict(provider.choices):
            provider.choices = [*provider.choices, (survey.provider, survey.get_provider_display())]
        # A kind's own settings kept outside the survey (a live chat's) are fixed once it is made.
        for name in kind_for(survey).form_initial(survey):
            self.fields[name].disabled = True
            self.fields[name].help_text = "Fixed once the survey is made: make a new survey to change it."
        locked = survey_provider_locked(survey=survey)
        if locked:
            provider.disabled = True
            provider.help_text = f"Fixed: {locked}"

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if Survey.objects.filter(name=name, owner=self.owner).exclude(pk=self.survey.pk).exists():
            raise forms.ValidationError("You already have a survey with this name.")
        return name
