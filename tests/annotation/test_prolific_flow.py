"""A survey on Prolific: publishing, the entry page, forged ids, reconciliation and review."""

import io
import json

import httpx
import pytest
from django.test import Client

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.study import slot_count
from annotation.kinds.rating.exporting import ratings_export
from annotation.models import Assignment, ProlificBonus, ProlificStudy, ProlificSubmission, Rating, Survey
from annotation.quality.selectors import accepted_ratings
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    confirmed_assignment,
    do_task,
    entry,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    submissions_answer,
)


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    return survey


def test_publishing_creates_one_study_with_the_entry_url_codes_reward_and_places(researcher, api):
    survey = make_prolific_survey(researcher, reward_cents=150, minutes=10)
    created = publish(api, survey)
    body = json.loads(created.calls.last.request.content)
    study = ProlificStudy.objects.get(survey=survey)
    assert body["external_study_url"] == (
        f"https://ratelab.example.org/p/{survey.token}/"
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert body["prolific_id_option"] == "url_parameters"
    assert body["reward"] == 150 and body["estimated_completion_time"] == 10
    assert body["total_available_places"] == Assignment.objects.filter(hit__survey=survey).count() == 4
    codes = {code["code_type"]: code["code"] for code in body["completion_codes"]}
    assert codes == {"COMPLETED": study.completed_code, "FAILED_ATTENTION_CHECK": study.failed_check_code}
    assert study.study_id == STUDY_ID and study.status == "ACTIVE"


def test_publishing_twice_creates_the_study_once(survey, api):
    created = api.post("studies/")
    before = created.call_count  # respx hands back the publish fixture's route
    provider().publish(survey=survey)
    assert created.call_count == before == 1


def test_a_reward_under_the_hourly_floor_is_refused_with_the_figures_before_any_request(researcher, api):
    survey = make_prolific_survey(researcher, reward_cents=50, minutes=10)
    created = api.post("studies/")
    with pytest.raises(ProviderError) as refused:
        provider().publish(survey=survey)
    assert "£0.50 for 10 minutes" in str(refused.value) and "£3.00 an hour" in str(refused.value)
    assert "£6.00 an hour" in str(refused.value) and "top-up of £0.50" in str(refused.value)
    assert created.call_count == 0


def test_opening_the_study_url_claims_nothing_and_starting_does(client, survey):
    page = entry(client, survey, participant=pid(1), session_id=session(1), method="get")
    assert page.status_code == 200 and b"Start" in page.content
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()
    assert not ProlificSubmission.objects.exists()
    started = entry(client, survey, participant=pid(1), session_id=session(1))
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    assert Assignment.objects.get(status=Assignment.Status.ACTIVE).annotator.worker_id == pid(1)
    assert ProlificSubmission.objects.get().confirmed is False


def test_a_study_url_of_another_study_is_refused(client, survey):
    refused = client.get(
        f"/p/{survey.token}/", {"PROLIFIC_PID": pid(1), "STUDY_ID": "f" * 24, "SESSION_ID": session(1)}
    )
    assert refused.status_code == 400 and b"another Prolific study" in refused.content


def test_a_malformed_or_missing_parameter_is_named(client, survey):
    refused = client.get(f"/p/{survey.token}/", {"PROLIFIC_PID": "<script>", "STUDY_ID": STUDY_ID})
    assert refused.status_code == 400
    assert b"PROLIFIC_PID, SESSION_ID" in refused.content


def test_someone_elses_session_id_with_a_forged_participant_id_gets_no_work(client, survey):
    entry(client, survey, participant=pid(1), session_id=session(1))
    client.cookies.clear()
    forged = entry(client, survey, participant=pid(9), session_id=session(1))
    assert forged.status_code == 403
    assert not Assignment.objects.filter(annotator__worker_id=pid(9)).exists()


def test_the_participant_goes_back_to_prolific_with_the_completed_code(client, survey):
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)))
    finish = client.get(f"/p/{survey.token}/finish/")
    code = ProlificStudy.objects.get(survey=survey).completed_code
    assert finish.status_code == 302
    assert finish["Location"] == f"https://app.prolific.com/submissions/complete?cc={code}"


def test_a_failed_check_under_the_reject_policy_sends_the_failed_check_code(client, survey):
    survey.attention_policy = survey.AttentionPolicy.REJECT
    survey.save()
    started = entry(client, survey, participant=pid(1), session_id=session(1))
    token = started["Location"].rstrip("/").split("/")[-1]
    slot = Assignment.objects.get(token=token)
    data = {f"score-{item.pk}-overall": "5" for item in slot.hit.items.all()}  # the instructed check wants 2
    client.post(started["Location"], data)
    code = ProlificStudy.objects.get(survey=survey).failed_check_code
    assert client.get(f"/p/{survey.token}/finish/")["Location"].endswith(f"cc={code}")


def test_work_counts_only_once_prolific_lists_the_same_session_for_the_same_participant(client, survey, api):
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)), score=4)
    client.cookies.clear()
    # A forger invents a session id Prolific never issued.
    do_task(client, entry(client, survey, participant=pid(2), session_id=session(2)), score=1)
    assert accepted_ratings(dataset=survey.dataset, surveys=[survey]).count() == 0
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(
            200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW"), (session(7), pid(7), "ACTIVE"))
        )
    )
    summary = provider().sync(survey=survey)
    assert summary == {"listed": 2, "confirmed": 1, "unknown": 1, "median_seconds": None}
    counted = accepted_ratings(dataset=survey.dataset, surveys=[survey], apply_exclusions=False)
    assert set(counted.values_list("annotator__worker_id", flat=True)) == {pid(1)}
    assert Rating.objects.filter(survey=survey, annotator__worker_id=pid(2)).exists()
    provider().sync(survey=survey)  # a second sync changes nothing
    assert ProlificSubmission.objects.filter(confirmed=True).count() == 1


def test_a_session_listed_under_another_participant_stays_unconfirmed(client, survey, api):
    do_task(client, entry(client, survey, participant=pid(2), session_id=session(1)))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW")))
    )
    provider().sync(survey=survey)
    assert ProlificSubmission.objects.get().confirmed is False


def test_a_returned_submission_frees_the_participants_slot(client, survey, api):
    entry(client, survey, participant=pid(1), session_id=session(1))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "RETURNED")))
    )
    provider().sync(survey=survey)
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()


def test_a_session_prolific_reported_returned_gets_no_more_work(client, survey, api):
    entry(client, survey, participant=pid(1), session_id=session(1))
    ProlificSubmission.objects.update(status="RETURNED")
    Assignment.objects.filter(status=Assignment.Status.ACTIVE).update(status=Assignment.Status.OPEN, annotator=None)
    again = entry(client, survey, participant=pid(1), session_id=session(1))
    assert again.status_code == 409 and b"has ended" in again.content
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()


def test_a_second_session_of_the_same_participant_is_told_to_continue_the_first(client, survey):
    entry(client, survey, participant=pid(1), session_id=session(1))
    second = entry(client, survey, participant=pid(1), session_id=session(3))
    assert second.status_code == 409 and b"continue it from Prolific" in second.content
    assert ProlificSubmission.objects.count() == 1


@pytest.fixture
def confirmed(client, survey, api):
    return confirmed_assignment(client, survey, api)


def test_unconfirmed_work_cannot_be_approved(client, survey, api):
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)))
    slot = Assignment.objects.get(status=Assignment.Status.SUBMITTED)
    route = api.post(f"submissions/{session(1)}/transition/")
    with pytest.raises(ProviderError, match="not confirmed"):
        provider().approve(assignment=slot)
    assert route.call_count == 0


def test_approving_sends_approve_once_even_when_repeated(confirmed, api):
    route = api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "APPROVED"})
    )
    provider().approve(assignment=confirmed)
    provider().approve(assignment=confirmed)
    assert route.call_count == 1 and json.loads(route.calls.last.request.content) == {"action": "APPROVE"}
    confirmed.refresh_from_db()
    assert confirmed.status == Assignment.Status.APPROVED


def test_a_rejection_needs_a_message_of_100_characters_and_a_known_category(confirmed, api):
    route = api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "REJECTED"})
    )
    with pytest.raises(ProviderError, match="at least 100 characters"):
        provider().reject(assignment=confirmed, reason="too short", category="FAILED_CHECK")
    with pytest.raises(ProviderError, match="Unknown rejection category"):
        provider().reject(assignment=confirmed, reason="x" * 120, category="RUDE")
    assert route.call_count == 0
    message = "You rated every reply with the same score and failed the instructed check that asked for a 2. " * 2
    provider().reject(assignment=confirmed, reason=message, category="FAILED_CHECK")
    sent = json.loads(route.calls.last.request.content)
    assert sent == {"action": "REJECT", "message": message.strip(), "rejection_category": "FAILED_CHECK"}


def bonus_routes(api, *, pay):
    created = api.post("submissions/bonus-payments/").mock(
        return_value=httpx.Response(201, json={"id": "bulk-1", "study": STUDY_ID, "amount": 50, "total_amount": 67})
    )
    paid = api.post("bulk-bonus-payments/bulk-1/pay/").mock(side_effect=pay)
    return created, paid


def test_a_bonus_is_set_up_then_paid_once_even_when_the_request_is_repeated(confirmed, api):
    created, paid = bonus_routes(api, pay=[httpx.Response(202, json={})])
    provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert created.call_count == 1 and paid.call_count == 1
    assert json.loads(created.calls.last.request.content) == {"study_id": STUDY_ID, "csv_bonuses": f"{pid(1)},0.50\n"}
    assert ProlificBonus.objects.get().paid_at is not None


def test_a_pay_call_whose_answer_is_lost_is_reconciled_not_repeated(confirmed, api):
    _, paid = bonus_routes(api, pay=httpx.ReadTimeout("lost"))
    submission = api.get(f"submissions/{session(1)}/").mock(
        side_effect=[
            httpx.Response(200, json={"id": session(1), "bonus_payments": []}),
            httpx.Response(200, json={"id": session(1), "bonus_payments": [50]}),
        ]
    )
    with pytest.raises(ProviderError, match="will not be sent again"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    # The retry (a page reloaded, a task re-run) finds the payment on Prolific and pays nothing.
    bonus = provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert paid.call_count == 1 and submission.call_count == 2
    assert bonus.paid_at is not None


def test_a_refused_pay_call_may_be_sent_again(confirmed, api):
    _, paid = bonus_routes(
        api, pay=[httpx.Response(400, json={"error": {"detail": "Insufficient funds"}}), httpx.Response(202, json={})]
    )
    with pytest.raises(ProviderError, match="Insufficient funds"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1").paid_at is not None
    assert paid.call_count == 2


def test_places_only_increase(survey, api):
    slots = slot_count(survey)
    ProlificStudy.objects.filter(survey=survey).update(places=slots - 2)  # say an extension's PATCH failed
    route = api.patch(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(200, json={"id": STUDY_ID, "total_available_places": slots})
    )
    with pytest.raises(ProviderError, match="only lets places increase"):
        provider().add_places(survey=survey, places=slots - 2)
    provider().add_places(survey=survey, places=slots)
    assert json.loads(route.calls.last.request.content) == {"total_available_places": slots}


def test_places_beyond_the_task_slots_are_refused_before_prolific_is_asked(survey, api):
    slots = slot_count(survey)
    route = api.patch(f"studies/{STUDY_ID}/").mock(return_value=httpx.Response(200, json={}))
    with pytest.raises(ProviderError, match=f"has {slots} task slots.*would find no work"):
        provider().add_places(survey=survey, places=slots + 1)
    assert not route.called


def test_rating_exports_say_whether_prolific_confirmed_each_rating(client, survey, api):
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)), score=4)
    client.cookies.clear()
    do_task(client, entry(client, survey, participant=pid(2), session_id=session(2)), score=1)  # never listed
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW")))
    )
    provider().sync(survey=survey)
    stream = io.StringIO()
    ratings_export(dataset=survey.dataset, survey=survey, stream=stream, real_ids=True)
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    by_worker = {(record["worker"], record["confirmed"]) for record in records}
    assert by_worker == {(pid(1), True), (pid(2), False)}


def test_new_sessions_from_one_address_are_capped_per_hour_and_a_started_one_goes_on(survey):
    # The URL's parameters are only claims: one person with the study link could take every open
    # place with made-up ids for the length of an assignment. As on the survey's own link, new
    # sessions are capped per client address and hour.
    Survey.objects.filter(pk=survey.pk).update(new_annotators_per_address_hour=2)
    here, elsewhere = Client(REMOTE_ADDR="203.0.113.7"), Client(REMOTE_ADDR="198.51.100.9")
    for n in (1, 2):
        assert entry(here, survey, participant=pid(n), session_id=session(n)).status_code == 302
    refused = entry(Client(REMOTE_ADDR="203.0.113.7"), survey, participant=pid(3), session_id=session(3))
    assert refused.status_code == 429 and b"Too many new participants have joined this study" in refused.content
    assert not ProlificSubmission.objects.filter(session_id=session(3)).exists()
    assert entry(here, survey, participant=pid(1), session_id=session(1)).status_code == 302  # started: goes on
    assert entry(elsewhere, survey, participant=pid(3), session_id=session(3)).status_code == 302
    assert ProlificSubmission.objects.get(session_id=session(3)).address == "198.51.100.9"


def test_a_participant_at_the_task_cap_is_thanked_once(client, api, researcher):
    # The cap page's heading thanks them; the cap message under it no longer thanks them again.
    survey = make_prolific_survey(researcher, name="capped")
    Survey.objects.filter(pk=survey.pk).update(max_hits_per_annotator=1)
    publish(api, survey)
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)))
    text = entry(client, survey, participant=pid(1), session_id=session(1)).content.decode()
    assert "You have completed the maximum of 1 task in this study: there are no more for you." in text
    assert text.count("Thank you!") == 1


def test_the_entry_page_never_shows_participants_the_researchers_name_for_the_survey(client, researcher, api):
    survey = make_prolific_survey(researcher, name="hred-vs-human-pilot")
    publish(api, survey)
    page = entry(client, survey, participant=pid(1), session_id=session(1), method="get")
    assert page.status_code == 200
    assert b"hred-vs-human-pilot" not in page.content
    assert b"<title>Rating study \xc2\xb7 RateLab</title>" in page.content
