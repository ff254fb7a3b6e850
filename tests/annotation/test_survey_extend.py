"""Extending a running study by more ratings per response (the planning panel's one click)."""

import pytest
from django.urls import reverse

from annotation import services
from annotation.crowd.base import ProviderError
from annotation.models import Assignment, HITItem, Survey
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
    response = client.post(url, {"per_hit": 1, "from_assignments": 2, "confirm": "yes"}, follow=True)
    assert "more assignments, 3 per HIT now" in response.content.decode()
    assert slots(survey) == before + survey.hits.count()
    response = client.post(url, {"per_hit": "many", "from_assignments": 3}, follow=True)
    assert "a whole number" in response.content.decode()


def test_the_panel_button_only_asks_first_with_the_work_its_cost_and_time_and_adds_nothing(client, researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    hits, before = survey.hits.count(), slots(survey)
    client.force_login(researcher)
    response = client.post(reverse("annotation:survey_extend", args=[survey.pk]), {"per_hit": 2, "from_assignments": 2})
    assert response.status_code == 200
    assert slots(survey) == before and Survey.objects.get(pk=survey.pk).assignments_per_hit == 2
    body = response.content.decode()
    # 12 contexts, 3 per HIT: 4 HITs; each HIT 3 contexts x 3 systems (+ 1 check block) = 12 answers
    minutes = services.survey_estimate_for(survey=survey)["minutes_per_hit"]
    assert hits == 4
    assert f"{2 * hits} assignments: {hits} HITs × 2, from 2 to 4 per HIT" in body
    responses = HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.RESPONSE).count()
    assert f"about {responses * 2} more ratings" in body  # every response of every HIT rated twice more
    assert f"{round(2 * hits * minutes / 60, 1)} annotator-hour" in body
    assert "none ($0.00)" in body and "paid nothing through RateLab" in body
    assert 'name="confirm" value="yes"' in body and 'name="from_assignments" value="2"' in body


def test_the_confirmation_extends_once_and_a_second_confirm_adds_nothing(client, researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    hits, before = survey.hits.count(), slots(survey)
    client.force_login(researcher)
    url = reverse("annotation:survey_extend", args=[survey.pk])
    confirm = {"per_hit": 2, "from_assignments": 2, "confirm": "yes"}
    first = client.post(url, confirm, follow=True)
    assert f"{2 * hits} more assignments, 4 per HIT now" in first.content.decode()
    again = client.post(url, confirm, follow=True)  # a double click, or the page sent again from the history
    assert "already has 4 assignments per HIT (the page showed 2): nothing was added" in again.content.decode()
    assert slots(survey) == before + 2 * hits
    assert Survey.objects.get(pk=survey.pk).assignments_per_hit == 4
    # The confirmation page of an already-extended survey refuses before anyone confirms.
    stale = client.post(url, {"per_hit": 2, "from_assignments": 2}, follow=True)
    assert "nothing was added" in stale.content.decode() and slots(survey) == before + 2 * hits


def test_a_link_survey_confirmation_prices_the_work_on_the_platform(client, researcher):
    survey = make_survey(researcher, assignments_per_hit=2, provider=Survey.Provider.LINK, reward_cents=80)
    hits = survey.hits.count()
    client.force_login(researcher)
    body = client.post(
        reverse("annotation:survey_extend", args=[survey.pk]), {"per_hit": 1, "from_assignments": 2}
    ).content.decode()
    assert f"${hits * 0.80:.2f} on the platform, plus its fees" in body
    assert "outside RateLab" in body
