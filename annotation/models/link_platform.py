"""Surveys on platforms that work by link and completion code (CloudResearch Connect, SONA, ...).

The platform sends participants to the survey's entry page with their id in a URL parameter the
researcher names, and takes them back through a completion URL with the survey's code. There is no
API to ask, so a participant's work is unconfirmed until the researcher confirms the ids the
platform lists as completed (`link_confirm`).
"""

import secrets

from django.db import models

from annotation.models.ratings import Annotator
from annotation.models.surveys import Survey


def new_link_code():
    return secrets.token_hex(4).upper()


class LinkPlatform(models.Model):
    survey = models.OneToOneField(Survey, on_delete=models.CASCADE, related_name="link_platform")
    participant_param = models.CharField(max_length=50, default="participant_id")
    completion_url = models.CharField(
        max_length=500, help_text="The platform's completion address, with {code} where the code goes."
    )
    completion_code = models.CharField(max_length=32, default=new_link_code)

    def __str__(self):
        return f"link platform of {self.survey}"


class LinkParticipant(models.Model):
    """A participant as the entry page saw them; `confirmed` once the researcher confirmed the id."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="link_participants")
    participant_id = models.CharField(max_length=64)
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="link_participations")
    confirmed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # the client address the id was first claimed from: new ids are capped per address and hour,
    # as on the survey's own link (Survey.new_annotators_per_address_hour)
    address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["survey", "participant_id"], name="linkparticipant_once_per_survey")
        ]

    def __str__(self):
        return self.participant_id
