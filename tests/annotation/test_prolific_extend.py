"""Extending a published Prolific study from the planning panel: its places follow the new slots."""

import json

import httpx
import pytest
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.study import slot_count
from annotation.models import Assignment, ProlificStudy
from annotation.services.extend import survey_extend
from tests.annotation.prolific_helpers import STUDY_ID, make_prolific_survey, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    return survey


def test_extending_a_published_study_raises_its_places_to_the_new_slot_count(survey, api):
    before, per_hit, hits = slot_count(survey), survey.assignments_per_hit, survey.hits.count()
    route = api.patch(f"studies/{STUDY_ID}/").mock(
        side_effect=lambda request: httpx.Response(200, json={"id": STUDY_ID, **json.loads(request.content)})
    )
    survey_extend(survey=survey, per_hit=2, from_assignments=per_hit)
    assert slot_count(survey) == before + 2 * hits
    assert json.loads(route.calls.last.request.content) == {"total_available_places": before + 2 * hits}
    assert ProlificStudy.objects.get(survey=survey).places == before + 2 * hits


def test_a_refusal_from_prolific_adds_no_slots(survey, api):
    before, per_hit = slot_count(survey), survey.assignments_per_hit
    api.patch(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(400, json={"error": {"detail": "Study is completed"}})
    )
    api.get(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(200, json={"id": STUDY_ID, "status": "COMPLETED", "total_available_places": before})
    )
    with pytest.raises(ProviderError):
        survey_extend(survey=survey, per_hit=1, from_assignments=per_hit)
    assert Assignment.objects.filter(hit__survey=survey).count() == before
    survey.refresh_from_db()
    assert survey.assignments_per_hit == per_hit


def test_places_already_raised_by_hand_cover_the_extension_without_a_call(survey, api):
    per_hit, hits = survey.assignments_per_hit, survey.hits.count()
    ProlificStudy.objects.filter(survey=survey).update(places=slot_count(survey) + 10 * hits)
    route = api.patch(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json={}))
    survey_extend(survey=survey, per_hit=2, from_assignments=per_hit)
    survey.refresh_from_db()
    assert survey.assignments_per_hit == per_hit + 2 and route.call_count == 0


def test_the_panel_button_shows_the_places_and_prolifics_estimate_and_sends_no_places(survey, api, client, researcher):
    before, per_hit, hits = slot_count(survey), survey.assignments_per_hit, survey.hits.count()
    calculator = api.post("study-cost-calculator/").mock(return_value=httpx.Response(200, json={"total_cost": 501.0}))
    places = api.patch(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json={}))
    client.force_login(researcher)
    url = reverse("annotation:survey_extend", args=[survey.pk])
    body = client.post(url, {"per_hit": 2, "from_assignments": per_hit}).content.decode()
    # 2 more places on each HIT at the study's £1.50: the calculator is asked about those places only
    assert json.loads(calculator.calls.last.request.content) == {"reward": 150, "total_available_places": 2 * hits}
    assert f"{2 * hits} more Prolific places at £1.50 each: £{2 * hits * 1.50:.2f} in rewards" in body
    assert f"from {before} to {before + 2 * hits}" in body
    assert "£5.01 (Prolific&#x27;s estimate, fees included)" in body
    assert places.call_count == 0 and slot_count(survey) == before


def test_the_confirmation_page_says_when_prolific_gives_no_estimate(survey, api, client, researcher, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    client.force_login(researcher)
    url = reverse("annotation:survey_extend", args=[survey.pk])
    body = client.post(url, {"per_hit": 1, "from_assignments": survey.assignments_per_hit}).content.decode()
    assert "could not be had: PROLIFIC_API_TOKEN is not set" in body
    assert "plus Prolific&#x27;s fees" in body
