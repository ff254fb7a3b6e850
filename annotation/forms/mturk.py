"""The researcher's MTurk settings form. It has no credential field: those come from boto3's chain."""

from django import forms

from annotation.models.mturk import MTurkSettings


class MTurkSettingsForm(forms.ModelForm):
    class Meta:
        model = MTurkSettings
        fields = [
            "title",
            "description",
            "keywords",
            "auto_approval_delay_seconds",
            "lifetime_seconds",
            "frame_height",
            "locales",
            "min_approval_rate",
            "min_approved_hits",
            "use_exclusion_qualification",
        ]
