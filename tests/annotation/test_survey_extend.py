"""Extending a running study by more ratings per response (the planning panel's one click)."""

import pytest
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.models import Assignment, Survey
from annotation.services.extend import survey_extend
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db


def slots(survey):
    return Assignment.objects.filter(hit__survey=survey).count()


def test_extend_adds_open_slots_to_every_hit_of_a_local_survey(researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    hits, before = survey.hits.count(), slots(survey)
    result = survey_extend(survey=survey, per_hit=3, from_assignments=2)
    assert result == {"assignments_per_hit": 5, "added": 3 * hits}
    assert slots(survey) == before + 3 * hits
    assert Assignment.objects.filter(hit__survey=survey, slot=4, status=Assignment.Status.OPEN).count() == hits
    assert Survey.objects.get(pk=survey.pk).assignments_per_hit == 5


def test_a_repeated_click_finds_the_survey_already_extended_and_adds_nothing(researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    survey_extend(survey=survey, per_hit=1, from_assignments=2)
    after_first = slots(survey)
    with pytest.raises(ProviderError, match="already has 3 assignments per HIT"):
        survey_extend(survey=survey, per_hit=1, from_assignments=2)
    assert slots(survey) == after_first


@pytest.mark.parametrize("per_hit", [0, -1, 21])
def test_extend_refuses_a_number_out_of_range_and_changes_nothing(researcher, per_hit):
    survey = make_survey(researcher, assignments_per_hit=2)
    before = slots(survey)
    with pytest.raises(ProviderError, match="between 1 and 20"):
        survey_extend(survey=survey, per_hit=per_hit, from_assignments=2)
    assert slots(survey) == before


def test_a_survey_without_a_crowd_provider_says_so_and_nothing_is_added(researcher):
    survey = make_survey(researcher, assignments_per_hit=2, launch=False)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.IMPORTED)
    survey.refresh_from_db()
    before = slots(survey)
    with pytest.raises(ProviderError, match="No crowd provider for 'imported'"):
        survey_extend(survey=survey, per_hit=1, from_assignments=2)
    assert slots(survey) == before and Survey.objects.get(pk=survey.pk).assignments_per_hit == 2


def test_the_extend_button_works_for_the_owner_and_is_a_404_for_another(client, researcher, other_researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    before = slots(survey)
    url = reverse("annotation:survey_extend", args=[survey.pk])
    client.force_login(other_researcher)
    assert client.post(url, {"per_hit": 1, "from_assignments": 2}).status_code == 404
    assert slots(survey) == before
    client.force_login(researcher)
    response = client.post(url, {"per_hit": 1, "from_assignments": 2}, follow=True)
    assert "more assignments, 3 per HIT now" in response.content.decode()
    assert slots(survey) == before + survey.hits.count()
    response = client.post(url, {"per_hit": "many", "from_assignments": 3}, follow=True)
    assert "a whole number" in response.content.decode()
