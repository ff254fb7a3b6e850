from django import forms

from annotation.importing import FORMATS

FORMAT_CHOICES = [("", "From the file name (.csv is CSV, anything else JSONL)")] + [(f, f.upper()) for f in FORMATS]


class DatasetUploadForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="A unique name for the new dataset.")
    file = forms.FileField(help_text="JSONL (one context per line) or CSV, UTF-8.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class RatingsUploadForm(forms.Form):
    file = forms.FileField(help_text="JSONL or CSV with context_id, system, worker, score and optionally aspect.")
    survey_name = forms.CharField(
        max_length=200, required=False, help_text="Name of the new survey (default: <dataset>-imported)."
    )
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False)
    scale_min = forms.IntegerField(initial=1)
    scale_max = forms.IntegerField(initial=5)


class DatasetSearchForm(forms.Form):
    q = forms.CharField(required=False, label="Search", max_length=200)
