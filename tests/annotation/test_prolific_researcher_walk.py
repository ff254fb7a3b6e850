"""What a new lab met running a Prolific study in the browser only (create, publish, pause, review).

Prolific is faked at one point: respx in front of the real httpx client, with documented answers.
"""

import json
import re

import httpx
import pytest
from django.test import Client
from django.utils import timezone

from annotation.crowd.prolific.study import study_settings
from annotation.models import ProlificBonus, ProlificStudy, Response, Survey, WrittenResponse
from annotation.services import estimates
from annotation.services import surveys as survey_services
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    do_task,
    entry,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    study_answer,
    submissions_answer,
)
from tests.annotation.studies_helpers import make_survey as make_study
from tests.annotation.studies_helpers import survey_form_fields
from tests.factories import load_dataset_records


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher, reward_cents=200, minutes=10)
    Survey.objects.filter(pk=survey.pk).update(launched_at=timezone.now())  # live as if launched from its page
    survey.refresh_from_db()
    return survey


def page(client, survey):
    return client.get(f"/surveys/{survey.pk}/prolific/").content.decode()


def act(client, survey, **form):
    return client.post(f"/surveys/{survey.pk}/prolific/action/", form, follow=True)


def transitions(api):
    return api.post(f"studies/{STUDY_ID}/transition/")


def sent_actions(route):
    return [json.loads(call.request.content)["action"] for call in route.calls]


# --- creating a Prolific survey from the page ---------------------------------------------------


@pytest.fixture
def dataset(researcher):
    records = [
        {"context_id": f"c{i}", "context": ["Hi!"], "responses": [{"system": "s1", "text": f"hello {i}"}]}
        for i in range(3)
    ]
    return load_dataset_records(records=records, name="walk-data", owner=researcher)


def prolific_form(dataset, **extra):
    # 100 pence: Prolific's floor (£6 an hour) at the 10 minutes a new study is estimated at.
    return survey_form_fields(dataset, name="on-prolific", provider="prolific", **{"reward_cents": 100, **extra})


def test_the_survey_form_creates_a_prolific_survey_with_its_study_settings(researcher_client, dataset, prolific_env):
    response = researcher_client.post("/surveys/new/", prolific_form(dataset))
    survey = Survey.objects.get(name="on-prolific")
    assert response.status_code == 302 and response["Location"] == f"/surveys/{survey.pk}/"
    assert survey.provider == Survey.Provider.PROLIFIC and survey.status == Survey.Status.DRAFT
    study = ProlificStudy.objects.get(survey=survey)
    assert study.study_id == "" and study.completed_code and study.failed_check_code
    detail = researcher_client.get(response["Location"]).content.decode()
    assert f'id="prolific-page" href="/surveys/{survey.pk}/prolific/"' in detail
    # A Prolific survey pays a reward per participant, in the study's currency: no dollar figure here.
    assert "set on the survey's Prolific page" in detail and "in rewards" not in detail


def test_the_survey_form_refuses_a_prolific_reward_under_the_hourly_floor_with_its_figures(
    researcher_client, dataset, prolific_env
):
    # The form's usual reward (50) is under Prolific's floor: said here, not first at launch.
    response = researcher_client.post("/surveys/new/", prolific_form(dataset, reward_cents=50))
    text = response.content.decode().replace("&#x27;", "'")
    assert response.status_code == 200 and not Survey.objects.filter(name="on-prolific").exists()
    assert '<a href="#id_reward_cents">Reward per HIT (cents)</a>' in text
    assert "Prolific would refuse this study: A reward of £0.50 for 10 minutes" in text
    assert "£3.00 an hour, under Prolific's floor of £6.00 an hour" in text
    assert "Give at least 100 (pence of GBP)" in text


def test_the_survey_form_offers_prolifics_least_reward_to_its_script(researcher_client, dataset):
    text = researcher_client.get(f"/surveys/new/?dataset={dataset.pk}").content.decode()
    field = re.search(r'<input[^>]*id="id_reward_cents"[^>]*>', text).group(0)
    assert 'data-prolific-min="100"' in field and 'value="50"' in field
    assert "Prolific pays at least £6.00 an hour" in text


def test_a_reward_under_prolifics_floor_is_still_fine_for_the_built_in_link(researcher_client, dataset):
    response = researcher_client.post("/surveys/new/", survey_form_fields(dataset, name="local", provider="local"))
    assert response.status_code == 302 and Survey.objects.get(name="local").reward_cents == 50


def test_the_survey_form_refuses_prolific_on_a_server_without_its_token_or_https_address(
    researcher_client, dataset, monkeypatch, settings
):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    settings.PUBLIC_BASE_URL = "http://127.0.0.1:8000"
    response = researcher_client.post("/surveys/new/", prolific_form(dataset))
    text = response.content.decode().replace("&#x27;", "'")
    assert response.status_code == 200 and not Survey.objects.filter(name="on-prolific").exists()
    assert "Prolific is not set up on this server: PROLIFIC_API_TOKEN is not set" in text
    assert "PUBLIC_BASE_URL is 'http://127.0.0.1:8000', not an https address" in text
    assert '<a href="#id_provider">Participants from</a>' in text


def test_the_prolific_page_says_which_settings_the_server_lacks(researcher_client, survey, monkeypatch, settings):
    monkeypatch.delenv("PROLIFIC_API_TOKEN", raising=False)
    settings.PUBLIC_BASE_URL = ""
    text = page(researcher_client, survey)
    assert 'id="prolific-setup"' in text
    assert "PROLIFIC_API_TOKEN is not set; PUBLIC_BASE_URL is not set" in text


def test_the_prolific_page_leads_back_to_its_survey(researcher_client, survey):
    text = page(researcher_client, survey)
    assert f'id="survey-page" href="/surveys/{survey.pk}/"' in text and 'class="pipeline' in text
    assert 'id="prolific-setup"' not in text  # the test environment has the token and an https address


# --- pause, resume, stop: the survey and the study move together ---------------------------------


def test_the_study_controls_match_the_status_prolific_reports(researcher_client, survey, api):
    publish(api, survey)
    text = page(researcher_client, survey)
    assert 'value="pause"' in text and 'value="resume"' not in text
    ProlificStudy.objects.filter(survey=survey).update(status="PAUSED")
    text = page(researcher_client, survey)
    assert 'value="resume"' in text and 'value="pause"' not in text
    ProlificStudy.objects.filter(survey=survey).update(status="COMPLETED")
    text = page(researcher_client, survey)
    assert 'id="study-stopped"' in text
    assert not any(f'value="{action}"' in text for action in ("pause", "resume", "stop", "places"))


def test_pausing_and_resuming_on_the_prolific_page_moves_the_survey_too(researcher_client, survey, api):
    publish(api, survey)
    route = transitions(api)
    route.side_effect = [
        httpx.Response(200, json=study_answer(status="PAUSED")),
        httpx.Response(200, json=study_answer(status="ACTIVE")),
    ]
    text = act(researcher_client, survey, action="pause").content.decode()
    survey.refresh_from_db()
    assert survey.status == Survey.Status.PAUSED and "Prolific says the study is paused" in text
    act(researcher_client, survey, action="resume")
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE and sent_actions(route)[-2:] == ["PAUSE", "START"]


def test_stopping_on_the_prolific_page_asks_first_then_closes_the_survey(researcher_client, survey, api):
    publish(api, survey)
    route = transitions(api)
    route.mock(return_value=httpx.Response(200, json=study_answer(status="COMPLETED")))
    calls = route.call_count
    question = act(researcher_client, survey, action="stop").content.decode()
    assert "Stop the Prolific study of" in question and "cannot restart a stopped study" in question
    assert 'name="confirm" value="yes"' in question and route.call_count == calls
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE
    act(researcher_client, survey, action="stop", confirm="yes")
    survey.refresh_from_db()
    assert survey.status == Survey.Status.CLOSED and sent_actions(route)[-1] == "STOP"
    assert ProlificStudy.objects.get(survey=survey).status == "COMPLETED"


def test_a_stopped_study_is_not_sent_a_start_and_the_page_says_why(researcher_client, survey, api):
    publish(api, survey)
    ProlificStudy.objects.filter(survey=survey).update(status="COMPLETED")
    route = transitions(api)
    calls = route.call_count
    text = act(researcher_client, survey, action="resume").content.decode()
    assert route.call_count == calls
    assert f"Prolific study {STUDY_ID} was stopped (completed) and cannot be resumed" in text


def test_pausing_a_prolific_survey_on_its_survey_page_pauses_the_study(researcher_client, survey, api):
    publish(api, survey)
    route = transitions(api)
    route.side_effect = [
        httpx.Response(200, json=study_answer(status="PAUSED")),
        httpx.Response(200, json=study_answer(status="ACTIVE")),
    ]
    researcher_client.post(f"/surveys/{survey.pk}/pause/")
    assert sent_actions(route)[-1] == "PAUSE" and ProlificStudy.objects.get(survey=survey).status == "PAUSED"
    researcher_client.post(f"/surveys/{survey.pk}/launch/")
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE and sent_actions(route)[-1] == "START"


def test_a_pause_prolific_refuses_leaves_the_survey_live(survey, api):
    publish(api, survey)
    transitions(api).mock(return_value=httpx.Response(400, json={"error": {"detail": "Cannot pause."}}))
    with pytest.raises(Exception, match="Cannot pause"):
        survey_services.survey_pause(survey=survey)
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE


# --- the participants' rows --------------------------------------------------------------------


def confirmed_participant(survey, api, *, status="AWAITING REVIEW", n=1):
    browser = Client()  # the participant's own browser, not the researcher's session
    do_task(browser, entry(browser, survey, participant=pid(n), session_id=session(n)))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(n), pid(n), status)))
    )
    provider().sync(survey=survey)
    return ProlificStudy.objects.get(survey=survey).submissions.get(participant_id=pid(n))


def row_html(text, participant):
    return text.split(participant, 1)[1].split("</tr>", 1)[0]


@pytest.mark.parametrize(
    ("status", "offered"),  # offered: (approve and reject, bonus)
    [("AWAITING REVIEW", (True, True)), ("APPROVED", (False, True)), ("REJECTED", (False, False))],
)
def test_approve_and_reject_are_offered_only_while_prolific_awaits_review(
    researcher_client, survey, api, status, offered
):
    approve, bonus = offered
    publish(api, survey)
    confirmed_participant(survey, api, status=status)
    row = row_html(page(researcher_client, survey), pid(1))
    assert ('value="approve"' in row) is approve and ('value="reject"' in row) is approve
    assert ('value="bonus"' in row) is bonus
    assert 'value="block"' in row


def test_rejecting_on_the_prolific_page_asks_first_naming_the_participant_and_the_message(
    researcher_client, survey, api
):
    publish(api, survey)
    row = confirmed_participant(survey, api)
    rejected = api.post(url__regex=r"submissions/.*/transition/").mock(
        return_value=httpx.Response(200, json={"status": "REJECTED"})
    )
    message = "You answered every question with the same score, without reading the conversations. " * 2
    form = {"action": "reject", "submission": row.pk, "category": "LOW_EFFORT", "message": message}
    question = act(researcher_client, survey, **form).content.decode()
    assert f"Reject {pid(1)}'s submission?" in question and "loses their reward" in question
    assert 'name="confirm" value="yes"' in question and "LOW_EFFORT" in question
    assert rejected.call_count == 0
    act(researcher_client, survey, **form, confirm="yes")
    assert rejected.call_count == 1
    assert json.loads(rejected.calls[0].request.content)["action"] == "REJECT"


def test_a_reject_question_for_no_submission_says_so_and_asks_nothing(researcher_client, survey, api):
    publish(api, survey)
    text = act(researcher_client, survey, action="reject", submission="").content.decode()
    assert "Choose a participant" in text and 'name="confirm"' not in text


def test_a_stop_or_reject_from_another_researcher_or_staff_is_a_404(survey, api, other_researcher, django_user_model):
    staff = django_user_model.objects.create_user(username="staff", password="x", is_staff=True)
    for user in (other_researcher, staff):
        client = Client()
        client.force_login(user)
        for action in ("stop", "reject"):
            response = client.post(f"/surveys/{survey.pk}/prolific/action/", {"action": action, "confirm": "yes"})
            assert response.status_code == 404


def test_a_participants_row_lists_the_bonuses_already_paid(researcher_client, client, survey, api):
    publish(api, survey)
    row = confirmed_participant(survey, api)
    api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-1"}))
    api.post("bulk-bonus-payments/bulk-1/pay/").mock(return_value=httpx.Response(202, json={}))
    act(researcher_client, survey, action="bonus", submission=row.pk, amount="0.75", bonus_key="page-key-1")
    assert ProlificBonus.objects.get().paid_at is not None
    assert "£0.75 bonus paid." in row_html(page(researcher_client, survey), pid(1))


def test_a_blocked_participants_row_says_so_and_offers_no_second_block(
    researcher_client, client, survey, api, settings
):
    settings.PROLIFIC_WORKSPACE_ID = "ws-1"
    publish(api, survey)
    row = confirmed_participant(survey, api)
    api.get("participant-groups/").mock(return_value=httpx.Response(200, json={"results": []}))
    api.post("participant-groups/").mock(return_value=httpx.Response(201, json={"id": "group-1", "name": "x"}))
    api.post("participant-groups/group-1/participants/").mock(return_value=httpx.Response(200, json={"results": []}))
    act(researcher_client, survey, action="block", submission=row.pk, reason="Answered at random.", confirm="yes")
    html = row_html(page(researcher_client, survey), pid(1))
    assert ">excluded<" in html and ">blocked<" in html and 'value="block"' not in html


def test_a_session_prolific_does_not_list_says_so_after_a_sync(researcher_client, client, survey, api):
    publish(api, survey)
    browser = Client()
    do_task(browser, entry(browser, survey, participant=pid(9), session_id=session(9)))  # typed, never listed
    assert "not synced yet" in row_html(page(researcher_client, survey), pid(9))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=submissions_answer()))
    provider().sync(survey=survey)
    assert "not listed by Prolific" in row_html(page(researcher_client, survey), pid(9))


# --- a writing study on Prolific ---------------------------------------------------------------


def test_a_reply_written_under_an_unconfirmed_prolific_id_cannot_join_the_dataset(researcher, researcher_client, api):
    survey = make_study(researcher, n_contexts=2, contexts_per_hit=2, task_type="write", write_system_name="crowd",
                        assignments_per_hit=1, launch=False)  # fmt: skip
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.PROLIFIC)
    survey.refresh_from_db()
    study_settings(survey, reward_cents=200, minutes=10)
    api.post("studies/").mock(return_value=httpx.Response(201, json=study_answer()))
    transitions(api).mock(return_value=httpx.Response(200, json=study_answer(status="ACTIVE")))
    survey_services.survey_launch(survey=survey)
    browser = Client()
    task = entry(browser, survey, participant=pid(7), session_id=session(7))["Location"]
    items = re.findall(r'name="text-(\d+)"', browser.get(task).content.decode())
    browser.post(task, {f"text-{item}": "I like it too, mostly in summer." for item in items})
    written = WrittenResponse.objects.order_by("pk").first()

    review = researcher_client.get(f"/surveys/{survey.pk}/written/").content.decode()
    assert "not confirmed by Prolific yet" in review and 'value="accept"' not in review
    answer = researcher_client.post(
        f"/surveys/{survey.pk}/written/", {"written": written.pk, "action": "accept"}, follow=True
    )
    assert "Prolific has not confirmed this participant" in answer.content.decode()
    assert not Response.objects.filter(system__name="crowd").exists()

    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(7), pid(7), "AWAITING REVIEW")))
    )
    provider().sync(survey=survey)
    researcher_client.post(f"/surveys/{survey.pk}/written/", {"written": written.pk, "action": "accept"})
    assert Response.objects.get(system__name="crowd").text == written.text


# --- the participant who finds the study full ----------------------------------------------------


def test_a_participant_who_found_no_task_is_asked_to_return_the_study_not_given_a_code(researcher, api):
    survey = make_prolific_survey(researcher, n_hits=1, assignments=1, name="one-place")
    publish(api, survey)
    worker = Client()
    do_task(worker, entry(worker, survey, participant=pid(1), session_id=session(1)))
    again = entry(worker, survey, participant=pid(1), session_id=session(1)).content.decode()
    assert 'id="prolific-finish"' in again and "prolific-return" not in again
    late = entry(Client(), survey, participant=pid(2), session_id=session(2)).content.decode()
    assert 'id="prolific-finish"' not in late and "/finish/" not in late
    assert 'id="prolific-return"' in late and "<strong>return</strong> the study" in late


def test_the_prolific_page_shows_the_layouts_own_time_per_task_beside_the_estimate(researcher_client, survey):
    minutes = estimates.survey_estimate_for(survey=survey)["minutes_per_hit"]
    text = page(researcher_client, survey)
    cell = text.split('id="task-minutes">', 1)[1].split("</td>", 1)[0]
    assert f"about {minutes} min per task" in cell and f"up to {survey.max_hits_per_annotator} task" in cell
