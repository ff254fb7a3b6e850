"""Extending a published Prolific study from the planning panel: its places follow the new slots."""

import json

import httpx
import pytest

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific import slot_count
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
