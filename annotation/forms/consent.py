"""The survey form's consent and questionnaire section (its own form, prefix "consent", so the
survey form and the draft editor can each include it beside their own fields)."""

from django import forms

from annotation.models import Survey
from annotation.services.questionnaire_spec import SpecError, parse_questions, questions_text

QUESTIONS_HELP = (
    "One question a line: kind | key | question | options. Kinds: single (one option), multi (any "
    "options), scale (1–5; options name the two ends), text (short), number (options: min-max). "
    "Options are separated by ;. Every question can be answered “Prefer not to say”. "
    "Example: single | age | Your age | 18–29; 30–44; 45–64; 65+"
)


class ConsentForm(forms.Form):
    consent_text = forms.CharField(
        label="Consent page (optional)",
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text="Shown once to each annotator before any task: who you are, what the study does, what is "
        "recorded, how to withdraw. They accept or decline; declining ends the study for them and claims no "
        "work (on Prolific they return it with the study's NO_CONSENT code). Not for Mechanical Turk.",
    )
    consent_version = forms.CharField(
        label="Consent text version",
        required=False,
        max_length=40,
        initial="1",
        help_text="Kept with every answer; change it when you change the text (annotators are then asked again).",
    )
    pre_questions = forms.CharField(
        label="Questions before the tasks (optional)",
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=QUESTIONS_HELP,
    )
    post_questions = forms.CharField(
        label="Questions after the tasks (optional)",
        required=False,
        max_length=20000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Asked once an annotator has handed in work, before they finish. Same format as above.",
    )

    def __init__(self, *args, provider=None, setup=None, **kwargs):
        if setup is not None:
            kwargs.setdefault(
                "initial",
                {
                    "consent_text": setup.consent_text,
                    "consent_version": setup.consent_version or "1",
                    "pre_questions": questions_text(setup.pre_questions),
                    "post_questions": questions_text(setup.post_questions),
                },
            )
        super().__init__(*args, prefix="consent", **kwargs)
        self.provider = provider

    def _questions(self, name, label):
        try:
            return parse_questions(self.cleaned_data.get(name, ""), label=label)
        except SpecError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_pre_questions(self):
        return self._questions("pre_questions", "Questions before the tasks")

    def clean_post_questions(self):
        return self._questions("post_questions", "Questions after the tasks")

    def clean(self):
        data = super().clean()
        if "\x00" in data.get("consent_text", ""):
            self.add_error("consent_text", "The text holds a NUL character, which cannot be stored.")
        asked = data.get("consent_text", "").strip() or data.get("pre_questions") or data.get("post_questions")
        if asked and self.provider == Survey.Provider.MTURK:
            raise forms.ValidationError(
                "Mechanical Turk surveys cannot have a consent page or questionnaires here: put the consent text "
                "in the HIT's description, or choose another crowd."
            )
        return data

    def setup_values(self):
        data = self.cleaned_data
        return {
            "consent_text": data.get("consent_text", ""),
            "consent_version": data.get("consent_version") or "1",
            "pre_questions": data.get("pre_questions") or [],
            "post_questions": data.get("post_questions") or [],
        }
