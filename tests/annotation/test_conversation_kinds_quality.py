"""The quality report and the researcher's pages of conversation and ACUTE surveys, after a
simulated crowd with careless annotators: they are computed and shown, and the careless are caught."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Assignment
from tests.annotation.conversation_study_helpers import make_conversation_survey

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("task_type", ["conversation", "acute"])
def test_quality_and_survey_pages_of_a_simulated_conversation_study(researcher, researcher_client, task_type):
    survey = make_conversation_survey(researcher, n=9, turns=10, task_type=task_type, assignments_per_hit=3)
    call_command("simulate_ratings", survey.name, "--annotators", "6", "--careless", "0.5", stdout=io.StringIO())
    out = io.StringIO()
    call_command("recompute_quality", survey.name, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report, "a quality report"
    assert Assignment.objects.filter(hit__survey=survey, flagged=True).exists(), "careless annotators fail checks"
    for name in ("annotation:survey_detail", "annotation:quality_survey"):
        response = researcher_client.get(reverse(name, args=[survey.pk]))
        assert response.status_code == 200, name
    for name in ("annotation:survey_export", "annotation:survey_export_csv"):
        exported = researcher_client.get(reverse(name, args=[survey.pk]))
        body = b"".join(exported.streaming_content) if exported.streaming else exported.content
        assert exported.status_code == 200 and b"worker" in body and b"meena" in body, name
