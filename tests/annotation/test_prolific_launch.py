"""Launching a Prolific survey is recoverable, and the cost preview reads Prolific's documented answer.

respx stands in for Prolific, answering the documented requests: `POST studies/` (the draft),
`POST studies/{id}/transition/` (PUBLISH) and `POST study-cost-calculator/`
(https://docs.prolific.com/api-reference/studies/calculate-study-cost: request `reward` and
`total_available_places`, answer `total_cost` in cents, fees and VAT included).
"""

import json

import httpx
import pytest

from annotation import services
from annotation.crowd.base import ProviderError
from annotation.models import ProlificStudy, Survey
from tests.annotation.prolific_helpers import STUDY_ID, make_prolific_survey, study_answer


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher, reward_cents=150, minutes=10)
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    survey.refresh_from_db()
    return survey


def refused_then_published(api):
    """PUBLISH answered 422 (e.g. the workspace balance is short), then accepted on the retry."""
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    refusal = httpx.Response(422, json={"error": {"detail": "Insufficient funds in the workspace."}})
    transition = api.post(f"studies/{STUDY_ID}/transition/").mock(
        side_effect=[refusal, httpx.Response(200, json=study_answer(status="ACTIVE"))]
    )
    # After a refusal the provider asks for the study's state: still a draft.
    api.get(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json=study_answer()))
    return created, transition


def test_a_refused_publish_keeps_the_draft_and_the_retry_publishes_that_same_draft(survey, api):
    created, transition = refused_then_published(api)
    with pytest.raises(ProviderError, match=rf"did not publish draft study {STUDY_ID}.*Insufficient funds"):
        services.survey_launch(survey=survey)
    survey.refresh_from_db()
    study = ProlificStudy.objects.get(survey=survey)
    assert survey.status == Survey.Status.DRAFT and survey.launched_at is None
    assert study.study_id == STUDY_ID and study.status == "UNPUBLISHED"

    services.survey_launch(survey=survey)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE
    assert created.call_count == 1  # exactly one draft on Prolific
    assert transition.call_count == 2
    assert [json.loads(call.request.content) for call in transition.calls] == [{"action": "PUBLISH"}] * 2
    assert ProlificStudy.objects.get(survey=survey).status == "ACTIVE"


def test_the_launch_button_shows_the_draft_id_and_launching_again_recovers(researcher_client, survey, api):
    created, _ = refused_then_published(api)
    launch = f"/surveys/{survey.pk}/launch/"
    first = researcher_client.post(launch, follow=True).content.decode()
    assert f"did not publish draft study {STUDY_ID}" in first and "launching again publishes this same draft" in first
    assert 'id="launch"' in first  # the button to try again is still there
    researcher_client.post(launch)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE and created.call_count == 1


def test_the_cost_preview_sends_the_documented_fields_and_shows_the_total_with_fees(researcher_client, survey, api):
    calculator = api.post("study-cost-calculator/").mock(return_value=httpx.Response(200, json={"total_cost": 1260.0}))
    text = researcher_client.get(f"/surveys/{survey.pk}/prolific/?cost=1").content.decode()
    assert json.loads(calculator.calls.last.request.content) == {"reward": 150, "total_available_places": 4}
    assert '<span id="prolific-cost">£12.60</span>' in text and "fees and VAT included" in text


def test_a_cost_answer_without_total_cost_is_shown_as_a_problem_not_a_blank(researcher_client, survey, api):
    api.post("study-cost-calculator/").mock(return_value=httpx.Response(200, json={"cost": "12.60"}))
    text = researcher_client.get(f"/surveys/{survey.pk}/prolific/?cost=1").content.decode()
    assert "answered without a total_cost" in text


def test_a_publish_whose_answer_was_lost_but_carried_out_launches_the_survey(survey, api):
    # PUBLISH went through, its answers timed out, and the retries were refused as the study was
    # live already: Prolific's own state (GET studies/{id}/) says it is ACTIVE, so the survey is live.
    api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    api.post(f"studies/{STUDY_ID}/transition/").mock(side_effect=httpx.ReadTimeout("lost"))
    api.get(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json=study_answer(status="ACTIVE")))
    services.survey_launch(survey=survey)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE and survey.launched_at is not None
    assert ProlificStudy.objects.get(survey=survey).status == "ACTIVE"


def test_a_refused_publish_of_a_study_still_unpublished_keeps_the_survey_a_draft(survey, api):
    api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    refusal = httpx.Response(422, json={"error": {"detail": "Insufficient funds in the workspace."}})
    api.post(f"studies/{STUDY_ID}/transition/").mock(return_value=refusal)
    api.get(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json=study_answer(status="UNPUBLISHED")))
    with pytest.raises(ProviderError, match="Insufficient funds"):
        services.survey_launch(survey=survey)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.DRAFT


def test_a_draft_never_put_on_prolific_can_be_closed_and_calls_nothing(researcher_client, survey, api):
    transition = api.post(url__regex=r"studies/.*/transition/").mock(return_value=httpx.Response(200, json={}))
    page = researcher_client.post(f"/surveys/{survey.pk}/close/", {"confirm": "yes"}, follow=True).content.decode()
    survey.refresh_from_db()
    assert survey.status == Survey.Status.CLOSED, page
    assert transition.call_count == 0 and "no Prolific study yet" not in page


def test_launching_a_closed_survey_is_refused_before_anything_is_made_on_prolific(survey, api):
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    services.survey_close(survey=survey)
    with pytest.raises(services.SurveyError, match="is closed; it cannot become live"):
        services.survey_launch(survey=survey)
    assert created.call_count == 0 and not ProlificStudy.objects.get(survey=survey).study_id
