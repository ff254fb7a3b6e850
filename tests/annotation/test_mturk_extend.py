"""Extending a published MTurk study: CreateAdditionalAssignmentsForHIT through botocore's Stubber."""

import datetime as dt

import pytest
from django.urls import reverse

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk.extend import extend_request_token
from annotation.models import Assignment, Survey
from annotation.models.mturk import MTurkHIT
from annotation.services.extend import survey_extend
from tests.annotation.mturk_helpers import hit_id, make_survey, publish_all


def slots(survey):
    return {hit.external_id: Assignment.objects.filter(hit=hit).count() for hit in survey.hits.order_by("position")}


def expect_extend(stubber, n, *, add, target):
    mturk_hit = MTurkHIT.objects.get(mturk_id=hit_id(n))
    token = extend_request_token(mturk_hit=mturk_hit, target=target)
    stubber.add_response(
        "create_additional_assignments_for_hit",
        {},
        {"HITId": hit_id(n), "NumberOfAdditionalAssignments": add, "UniqueRequestToken": token},
    )
    return token


def test_extending_sends_each_hit_its_additional_assignments_with_a_token_per_hit_and_target(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    tokens = [expect_extend(stubber, n, add=2, target=5) for n in range(2)]
    result = survey_extend(survey=survey, per_hit=2, from_assignments=3)
    assert result == {"assignments_per_hit": 5, "added": 4}
    assert tokens[0] != tokens[1]
    assert slots(survey) == {hit_id(0): 5, hit_id(1): 5}
    assert list(MTurkHIT.objects.order_by("mturk_id").values_list("max_assignments", flat=True)) == [5, 5]
    assert Survey.objects.get(pk=survey.pk).assignments_per_hit == 5


def test_a_refusal_half_way_keeps_the_hits_done_and_the_same_click_finishes_with_the_same_token(stubber, researcher):
    survey = make_survey(researcher, n_hits=3)
    publish_all(stubber, survey)
    expect_extend(stubber, 0, add=1, target=4)
    token = extend_request_token(mturk_hit=MTurkHIT.objects.get(mturk_id=hit_id(1)), target=4)
    stubber.add_client_error(
        "create_additional_assignments_for_hit",
        service_error_code="ServiceFault",
        service_message="Internal failure",
        http_status_code=500,
        expected_params={"HITId": hit_id(1), "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": token},
    )
    with pytest.raises(ProviderError, match=f"HIT {hit_id(1)} was not extended, so it keeps 3 assignments"):
        survey_extend(survey=survey, per_hit=1, from_assignments=3)
    assert slots(survey) == {hit_id(0): 4, hit_id(1): 3, hit_id(2): 3}
    assert Survey.objects.get(pk=survey.pk).assignments_per_hit == 3

    # A different target would leave HITs with different counts: refused before any call.
    with pytest.raises(ProviderError, match="stopped half way: add 1 per response to finish it first"):
        survey_extend(survey=survey, per_hit=2, from_assignments=3)

    # MTurk had accepted HIT 1 after all: the same token is answered with its documented duplicate error.
    stubber.add_client_error(
        "create_additional_assignments_for_hit",
        service_error_code="RequestError",
        service_message=f"The UniqueRequestToken {token} has already been used. (1732450000000)",
        http_status_code=400,
        expected_params={"HITId": hit_id(1), "NumberOfAdditionalAssignments": 1, "UniqueRequestToken": token},
    )
    expect_extend(stubber, 2, add=1, target=4)
    result = survey_extend(survey=survey, per_hit=1, from_assignments=3)  # HIT 0 is not sent again
    assert result == {"assignments_per_hit": 4, "added": 2}
    assert slots(survey) == {hit_id(0): 4, hit_id(1): 4, hit_id(2): 4}


def test_a_repeated_click_after_success_sends_nothing_and_adds_nothing(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    publish_all(stubber, survey)
    expect_extend(stubber, 0, add=1, target=4)
    survey_extend(survey=survey, per_hit=1, from_assignments=3)
    with pytest.raises(ProviderError, match="already has 4 assignments per HIT"):
        survey_extend(survey=survey, per_hit=1, from_assignments=3)  # the stubber fails on any call
    assert slots(survey) == {hit_id(0): 4}


def test_crossing_ten_assignments_is_refused_naming_the_hit_before_anything_is_sent(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    with pytest.raises(ProviderError, match=f"HIT {hit_id(0)} has 3 assignments: MTurk cannot extend .* to 10"):
        survey_extend(survey=survey, per_hit=7, from_assignments=3)
    assert slots(survey) == {hit_id(0): 3, hit_id(1): 3}


def test_an_expired_hit_is_refused_naming_the_hit_and_nothing_is_added(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    MTurkHIT.objects.filter(mturk_id=hit_id(1)).update(expires_at=dt.datetime(2020, 1, 1, tzinfo=dt.UTC))
    with pytest.raises(ProviderError, match=f"HIT {hit_id(1)} expired on 2020-01-01 00:00 UTC"):
        survey_extend(survey=survey, per_hit=1, from_assignments=3)
    assert slots(survey) == {hit_id(0): 3, hit_id(1): 3}


def test_the_survey_page_button_extends_an_mturk_survey_for_its_owner_only(
    stubber, client, researcher, other_researcher
):
    survey = make_survey(researcher, n_hits=1)
    publish_all(stubber, survey)
    url = reverse("annotation:survey_extend", args=[survey.pk])
    client.force_login(other_researcher)
    assert client.post(url, {"per_hit": 1, "from_assignments": 3}).status_code == 404
    expect_extend(stubber, 0, add=1, target=4)
    client.force_login(researcher)
    asked = client.post(url, {"per_hit": 1, "from_assignments": 3})  # the stubber fails on any call
    assert asked.status_code == 200 and slots(survey) == {hit_id(0): 3}
    # 1 assignment at 50 cents, MTurk's 20% fee (10 cents): $0.60
    assert "$0.60" in asked.content.decode() and "20%" in asked.content.decode()
    response = client.post(url, {"per_hit": 1, "from_assignments": 3, "confirm": "yes"}, follow=True)
    assert "1 more assignments, 4 per HIT now" in response.content.decode()
    assert slots(survey) == {hit_id(0): 4}
    assert client.get(url).status_code == 405


def test_a_slot_the_task_page_opened_past_a_returned_one_is_not_taken_for_an_extension(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    publish_all(stubber, survey)
    hit = survey.hits.get()
    Assignment.objects.create(hit=hit, slot=3, status=Assignment.Status.OPEN)  # as annotation.services.mturk does
    expect_extend(stubber, 0, add=1, target=4)  # MaxAssignments 3 → 4, whatever the slot numbers
    assert survey_extend(survey=survey, per_hit=1, from_assignments=3)["added"] == 1
    assert sorted(Assignment.objects.filter(hit=hit).values_list("slot", flat=True)) == [0, 1, 2, 3, 4]
    assert MTurkHIT.objects.get(hit=hit).max_assignments == 4


def test_hits_not_published_yet_get_their_slots_without_any_call(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    result = survey_extend(survey=survey, per_hit=2, from_assignments=3)  # the stubber fails on any call
    assert result == {"assignments_per_hit": 5, "added": 4}
    assert [Assignment.objects.filter(hit=hit).count() for hit in survey.hits.all()] == [5, 5]
