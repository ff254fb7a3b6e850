from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from annotation.importing import FORMATS
from annotation.importing.errors import NOTHING_IMPORTED
from annotation.models import Dataset, Survey

FORMAT_CHOICES = [("", "From the file name (.csv is CSV, anything else JSONL)")] + [(f, f.upper()) for f in FORMATS]


class UploadField(forms.FileField):
    """A FileField that says so when the upload size limit stopped the file (annotation/services/runtime/uploads.py),
    and says of every refusal that nothing was imported, as the import's own messages do."""

    default_error_messages = {
        "empty": f"The file is empty. {NOTHING_IMPORTED}",
        "required": f"Choose a file to upload. {NOTHING_IMPORTED}",
    }

    def to_python(self, data):
        refusal = getattr(data, "refusal", None)
        if refusal:
            raise ValidationError(f"{refusal}. {NOTHING_IMPORTED}", code="too_large")
        return super().to_python(data)


class _UploadForm(forms.Form):
    def __init__(self, *args, owner=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner = owner
        # The limit is a setting: it joins the help text of this form's own copy of the field.
        self.fields["file"].help_text += f" At most {settings.UPLOAD_MAX_MB} MB."


class DatasetUploadForm(_UploadForm):
    name = forms.CharField(max_length=200, help_text="A unique name for the new dataset.")
    file = UploadField(help_text="JSONL (one context per line) or CSV, UTF-8.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def clean_name(self):
        # Said beside the name, not among the file's errors (the import checks it again, after
        # reading the file).
        name = self.cleaned_data["name"]
        if self.owner is not None and Dataset.objects.filter(name=name, owner=self.owner).exists():
            raise ValidationError(
                f"A dataset of yours named {name!r} already exists; choose another name. {NOTHING_IMPORTED}"
            )
        return name


class RatingsUploadForm(_UploadForm):
    file = UploadField(help_text="JSONL or CSV with context_id, system, worker, score and optionally aspect.")
    survey_name = forms.CharField(
        max_length=200, required=False, help_text="Name of the new survey (default: <dataset>-imported)."
    )
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False)
    scale_min = forms.IntegerField(initial=1)
    scale_max = forms.IntegerField(initial=5)

    def clean_survey_name(self):
        name = self.cleaned_data["survey_name"].strip()
        if name and self.owner is not None and Survey.objects.filter(name=name, owner=self.owner).exists():
            raise ValidationError(
                f"A survey of yours named {name!r} already exists; choose another name. {NOTHING_IMPORTED}"
            )
        return name


class DatasetSearchForm(forms.Form):
    q = forms.CharField(required=False, label="Search", max_length=200)
