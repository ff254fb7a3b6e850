"""Prolific calls retried after an outcome that was not seen: a timeout, a 5xx, a broken connection.

Each test fakes Prolific at one point (respx in front of the real httpx client) with its documented
requests and answers, and plays the case where Prolific carried a request out but its answer never
arrived. A payment must be made once; a decision Prolific already made must not read as a refusal.
"""

import datetime as dt
import json

import httpx
import pytest
from django.utils import timezone

from annotation.crowd.base import ProviderError
from annotation.crowd.prolific.api import PaymentOutcomeUnknown, ProlificClient
from annotation.models import Assignment, ProlificBonus, ProlificStudy, ProlificSubmission
from annotation.services.extend import survey_extend
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    confirmed_assignment,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    submissions_answer,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher)
    publish(api, survey)
    return survey


@pytest.fixture
def confirmed(client, survey, api):
    return confirmed_assignment(client, survey, api)


def bonus_routes(api, *, pay):
    created = api.post("submissions/bonus-payments/").mock(
        return_value=httpx.Response(201, json={"id": "bulk-1", "study": STUDY_ID, "amount": 50, "total_amount": 67})
    )
    paid = api.post("bulk-bonus-payments/bulk-1/pay/").mock(side_effect=pay)
    return created, paid


def listed_bonuses(api, *answers):
    """GET submissions/{id}/ as documented: `bonus_payments` in pence / cents."""
    return api.get(f"submissions/{session(1)}/").mock(
        side_effect=[httpx.Response(200, json={"id": session(1), "bonus_payments": paid}) for paid in answers]
    )


# --- the pay call: not idempotent on Prolific's side ---------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_pay_call_answered_with_a_server_error_is_never_sent_again(confirmed, api, status):
    # A gateway that timed out while Prolific paid answers 502/504: the money may have moved.
    _, paid = bonus_routes(api, pay=[httpx.Response(status, text="Bad gateway"), httpx.Response(202, json={})])
    listed_bonuses(api, [], [50])
    with pytest.raises(ProviderError, match="will not be sent again"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    bonus = provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert paid.call_count == 1
    assert bonus.paid_at is not None


@pytest.mark.parametrize("broken", [httpx.RemoteProtocolError("no answer"), httpx.ReadError("connection reset")])
def test_a_pay_call_whose_connection_broke_after_sending_is_never_sent_again(confirmed, api, broken):
    _, paid = bonus_routes(api, pay=[broken, httpx.Response(202, json={})])
    listed_bonuses(api, [50])
    bonus = provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert paid.call_count == 1
    assert bonus.paid_at is not None


def test_a_pay_call_that_could_not_connect_may_be_sent_again(confirmed, api):
    # No connection was made, so Prolific never saw the request: sending it again pays once.
    _, paid = bonus_routes(api, pay=[httpx.ConnectError("refused"), httpx.Response(202, json={})])
    with pytest.raises(ProviderError, match="Cannot reach Prolific"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1").paid_at is not None
    assert paid.call_count == 2


def test_the_client_treats_a_5xx_on_a_call_that_must_not_repeat_as_an_unknown_outcome(api):
    route = api.post("bulk-bonus-payments/bulk-1/pay/").mock(return_value=httpx.Response(502, text="Bad gateway"))
    with pytest.raises(PaymentOutcomeUnknown, match="server error"):
        ProlificClient().pay_bonus("bulk-1")
    assert route.call_count == 1


def test_a_bonus_set_up_whose_answer_was_lost_is_set_up_again_and_paid_once(confirmed, api):
    created = api.post("submissions/bonus-payments/").mock(
        side_effect=[
            httpx.ReadTimeout("lost"),
            httpx.Response(201, json={"id": "bulk-2", "study": STUDY_ID, "amount": 50, "total_amount": 67}),
        ]
    )
    paid = api.post("bulk-bonus-payments/bulk-2/pay/").mock(return_value=httpx.Response(202, json={}))
    with pytest.raises(ProviderError, match="nothing was paid"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    bonus = provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-1")
    assert created.call_count == 2 and paid.call_count == 1
    assert bonus.bulk_id == "bulk-2" and bonus.paid_at is not None
    assert ProlificBonus.objects.count() == 1


# --- review decisions ----------------------------------------------------------------------------


def test_an_approval_carried_out_whose_answer_was_lost_is_recorded_not_reported_as_a_failure(confirmed, api):
    # The APPROVE reached Prolific but no answer came back, and the client's repeat is refused by
    # Prolific, which already approved the submission: its own state of the submission decides.
    transition = api.post(f"submissions/{session(1)}/transition/").mock(
        side_effect=[
            httpx.ReadTimeout("lost"),
            httpx.Response(400, json={"error": {"detail": "Submission is already approved."}}),
        ]
    )
    api.get(f"submissions/{session(1)}/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "APPROVED"})
    )
    provider().approve(assignment=confirmed)
    confirmed.refresh_from_db()
    assert confirmed.status == Assignment.Status.APPROVED
    assert ProlificSubmission.objects.get().status == "APPROVED"
    assert transition.call_count == 2


def test_an_approval_made_by_a_worker_killed_before_recording_it_is_recorded_by_the_next_click(confirmed, api):
    # Prolific approved; the process died before RateLab saved it (the row still says AWAITING REVIEW).
    api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(400, json={"error": {"detail": "Submission is already approved."}})
    )
    api.get(f"submissions/{session(1)}/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "APPROVED"})
    )
    assert ProlificSubmission.objects.get().status == "AWAITING REVIEW"
    provider().approve(assignment=confirmed)
    confirmed.refresh_from_db()
    assert confirmed.status == Assignment.Status.APPROVED


def test_a_rejection_prolific_already_made_is_recorded_by_the_next_click(confirmed, api):
    api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(400, json={"error": {"detail": "Submission is already rejected."}})
    )
    api.get(f"submissions/{session(1)}/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "REJECTED"})
    )
    message = "You rated every reply with the same score and failed the instructed check that asked for a 2. " * 2
    provider().reject(assignment=confirmed, reason=message, category="FAILED_CHECK")
    confirmed.refresh_from_db()
    assert confirmed.status == Assignment.Status.REJECTED


def test_a_refused_approval_of_a_submission_prolific_has_not_approved_is_still_refused(confirmed, api):
    api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(400, json={"error": {"detail": "Submission is still active."}})
    )
    api.get(f"submissions/{session(1)}/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "ACTIVE"})
    )
    with pytest.raises(ProviderError, match="still active"):
        provider().approve(assignment=confirmed)
    confirmed.refresh_from_db()
    assert confirmed.status == Assignment.Status.SUBMITTED


# --- places: PATCH studies/{id}/ {"total_available_places": n} ------------------------------------


def places_route(api, prolific, *refusing_first):
    """Prolific's study: a PATCH sets the places it names, never fewer than it has (documented: places
    only increase); `refusing_first` are answers (or errors) for the first PATCHes, each one carried
    out on Prolific's side before it fails, as a lost answer would be."""
    pending = list(refusing_first)

    def patch(request):
        wanted = json.loads(request.content)["total_available_places"]
        outcome = pending.pop(0) if pending else None
        if wanted < prolific["total_available_places"] or (
            outcome == "refuse-equal" and wanted == prolific["total_available_places"]
        ):
            return httpx.Response(400, json={"error": {"detail": "Places can only be increased."}})
        prolific["total_available_places"] = wanted
        if isinstance(outcome, Exception):
            raise outcome
        return httpx.Response(200, json={"id": STUDY_ID, **prolific})

    return api.patch(f"studies/{STUDY_ID}/").mock(side_effect=patch)


def study_read(api, prolific, *, unanswered=0):
    """GET studies/{id}/: the study as Prolific has it, after `unanswered` reads that time out."""
    left = [unanswered]

    def read(request):
        if left[0]:
            left[0] -= 1
            raise httpx.ReadTimeout("Prolific is not answering")
        return httpx.Response(200, json={"id": STUDY_ID, **prolific})

    return api.get(f"studies/{STUDY_ID}/").mock(side_effect=read)


def study_with_places(survey, places):
    """The published study as if it had fewer places than the survey's task slots (room to add)."""
    ProlificStudy.objects.filter(survey=survey).update(places=places)


def test_places_set_by_a_patch_whose_answer_was_lost_are_sent_again_as_the_same_absolute_number(survey, api):
    study_with_places(survey, 2)
    prolific = {"status": "ACTIVE", "total_available_places": 2}
    route = places_route(api, prolific, httpx.ReadTimeout("lost"))
    provider().add_places(survey=survey, places=4)
    bodies = [json.loads(call.request.content) for call in route.calls]
    assert bodies == [{"total_available_places": 4}, {"total_available_places": 4}]
    assert prolific["total_available_places"] == 4
    assert ProlificStudy.objects.get(survey=survey).places == 4


def test_places_prolific_already_set_are_recorded_when_it_refuses_the_repeat(survey, api):
    study_with_places(survey, 2)
    # Every PATCH of the first click timed out after Prolific applied it, and Prolific could not be
    # read either; the second click's PATCH is refused (a Prolific that takes only a larger number):
    # the study's own count decides.
    prolific = {"status": "ACTIVE", "total_available_places": 2}
    lost = httpx.ReadTimeout("lost")
    places_route(api, prolific, lost, lost, lost, "refuse-equal")
    study_read(api, prolific, unanswered=3)
    with pytest.raises(ProviderError, match="in time"):
        provider().add_places(survey=survey, places=4)
    assert ProlificStudy.objects.get(survey=survey).places == 2
    assert provider().add_places(survey=survey, places=4) == {"places": 4}
    assert ProlificStudy.objects.get(survey=survey).places == 4


def test_a_refusal_for_places_prolific_does_not_have_is_still_shown(survey, api):
    study_with_places(survey, 2)
    api.patch(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(400, json={"error": {"detail": "Study is completed"}})
    )
    api.get(f"studies/{STUDY_ID}/").mock(
        return_value=httpx.Response(200, json={"id": STUDY_ID, "status": "COMPLETED", "total_available_places": 2})
    )
    with pytest.raises(ProviderError, match="Study is completed"):
        provider().add_places(survey=survey, places=4)
    assert ProlificStudy.objects.get(survey=survey).places == 2


def test_an_extension_whose_places_were_set_but_not_seen_is_finished_by_the_same_click(survey, api):
    per_hit, hits = survey.assignments_per_hit, survey.hits.count()
    before = Assignment.objects.filter(hit__survey=survey).count()
    prolific = {"status": "ACTIVE", "total_available_places": before}
    lost = httpx.ReadTimeout("lost")
    places_route(api, prolific, lost, lost, lost, "refuse-equal")
    study_read(api, prolific, unanswered=3)
    with pytest.raises(ProviderError):
        survey_extend(survey=survey, per_hit=1, from_assignments=per_hit)
    # Prolific has the places, RateLab kept nothing of the failed click: the same click finishes it.
    assert Assignment.objects.filter(hit__survey=survey).count() == before
    assert prolific["total_available_places"] == before + hits
    survey_extend(survey=survey, per_hit=1, from_assignments=per_hit)
    assert Assignment.objects.filter(hit__survey=survey).count() == before + hits
    assert ProlificStudy.objects.get(survey=survey).places == before + hits


# --- a sent bonus whose answer was lost: read back by sync, shown on the page ----------------------


def lost_bonus(api, confirmed, *, key="form-1"):
    """A bonus whose pay call timed out after it was sent (Prolific had not listed it when asked)."""
    _, paid = bonus_routes(api, pay=httpx.ReadTimeout("lost"))
    listed_bonuses(api, [])
    with pytest.raises(ProviderError, match="will not be sent again"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key=key)
    return paid


def sync_listing(api, *bonus_lists):
    """A sync's calls: the study's submissions, then the submission with its `bonus_payments`."""
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW")))
    )
    return listed_bonuses(api, *bonus_lists)


def test_a_sync_marks_paid_a_bonus_whose_pay_answer_was_lost_once_prolific_lists_it(confirmed, api):
    paid = lost_bonus(api, confirmed)
    sync_listing(api, [], [50])
    provider().sync(survey=confirmed.hit.survey)
    assert ProlificBonus.objects.get().paid_at is None  # Prolific pays within minutes: not listed yet
    provider().sync(survey=confirmed.hit.survey)
    assert ProlificBonus.objects.get().paid_at is not None
    assert paid.call_count == 1


def test_two_lost_bonuses_of_one_amount_are_paid_only_as_many_times_as_prolific_lists(confirmed, api):
    lost_bonus(api, confirmed, key="form-1")
    api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-2"}))
    api.post("bulk-bonus-payments/bulk-2/pay/").mock(side_effect=httpx.ReadTimeout("lost"))
    listed_bonuses(api, [])
    with pytest.raises(ProviderError, match="will not be sent again"):
        provider().bonus(assignment=confirmed, amount_cents=50, reason="thanks", key="form-2")
    sync_listing(api, [50])
    provider().sync(survey=confirmed.hit.survey)
    first, second = ProlificBonus.objects.order_by("pay_sent_at", "pk")
    assert first.paid_at is not None and second.paid_at is None


def test_the_page_shows_each_bonus_paid_waiting_or_probably_not_paid(researcher_client, confirmed, api):
    submission = ProlificSubmission.objects.get()
    now = timezone.now()
    ProlificBonus.objects.create(submission=submission, key="a", amount_cents=25, pay_sent_at=now, paid_at=now)
    ProlificBonus.objects.create(submission=submission, key="b", amount_cents=40, pay_sent_at=now)
    ProlificBonus.objects.create(
        submission=submission, key="c", amount_cents=60, pay_sent_at=now - dt.timedelta(hours=2)
    )
    text = researcher_client.get(f"/surveys/{confirmed.hit.survey_id}/prolific/").content.decode()
    assert "£0.25 bonus paid." in text
    assert "£0.40 bonus sent; Prolific has not listed it yet" in text
    assert "£0.60 bonus sent" in text and "it was probably not paid" in text


def studies_listed(*studies):
    """GET studies/ as documented: `results` of id, name, internal_name, status."""
    return {"results": list(studies), "_links": {"next": {"href": None}}}


def lost_draft_launch(api, survey):
    """A launch whose create-draft POST Prolific carried out but whose answer never came back."""
    created = api.post("studies/").mock(side_effect=[httpx.ReadTimeout("lost")])
    with pytest.raises(ProviderError, match="Launch again: RateLab first looks for a draft named"):
        provider().publish(survey=survey)
    assert created.call_count == 1  # never repeated by the client: a repeat makes a second draft
    return created.calls[0].request


def test_a_draft_whose_create_answer_was_lost_is_found_and_adopted_not_made_again(researcher, api):
    survey = make_prolific_survey(researcher, name="lost-draft")
    sent = json.loads(lost_draft_launch(api, survey).content)
    assert ProlificStudy.objects.get(survey=survey).study_id == ""
    # Another researcher's draft for a survey with the same pk on another RateLab database (its
    # own tag) and an unrelated study are listed too: only our draft's internal name is adopted.
    elsewhere = f"RateLab survey {survey.pk} (0123456789): lost-draft"
    listed = api.get("studies/").mock(
        return_value=httpx.Response(
            200,
            json=studies_listed(
                {"id": "unrelated", "name": "Another study", "internal_name": None, "status": "ACTIVE"},
                {"id": "elsewhere", "name": sent["name"], "internal_name": elsewhere, "status": "UNPUBLISHED"},
                {"id": STUDY_ID, "name": sent["name"], "internal_name": sent["internal_name"], "status": "UNPUBLISHED"},
            ),
        )
    )
    created = api.post("studies/").mock(return_value=httpx.Response(201, json={"id": "second-draft"}))
    published = api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json={"id": STUDY_ID, "status": "ACTIVE"})
    )
    provider().publish(survey=survey)
    # respx keeps one route per request: its one call is the lost POST, none came after it.
    assert created.call_count == 1 and listed.call_count == 1 and published.call_count == 1
    # only the account's drafts are asked for (the documented filter), not every study it ever ran
    assert listed.calls[0].request.url.params["state"] == "(UNPUBLISHED)"
    study = ProlificStudy.objects.get(survey=survey)
    assert (study.study_id, study.status) == (STUDY_ID, "ACTIVE")


def test_a_lost_draft_creation_prolific_never_carried_out_is_created_once_on_the_next_launch(researcher, api):
    survey = make_prolific_survey(researcher, name="lost-draft")
    lost_draft_launch(api, survey)
    api.get("studies/").mock(return_value=httpx.Response(200, json=studies_listed()))
    draft = {"id": STUDY_ID, "status": "UNPUBLISHED"}
    created = api.post("studies/").mock(return_value=httpx.Response(201, json=draft))
    api.post(f"studies/{STUDY_ID}/transition/").mock(return_value=httpx.Response(200, json={"status": "ACTIVE"}))
    provider().publish(survey=survey)
    assert created.call_count == 2  # the lost POST and this launch's: one draft on Prolific
    assert ProlificStudy.objects.get(survey=survey).study_id == STUDY_ID


def test_the_drafts_internal_name_carries_the_surveys_pk_and_a_tag_kept_across_launches(researcher, api):
    survey = make_prolific_survey(researcher, name="x" * 190)
    first = json.loads(lost_draft_launch(api, survey).content)["internal_name"]
    tag = ProlificStudy.objects.get(survey=survey).draft_tag
    assert first.startswith(f"RateLab survey {survey.pk} ({tag}): xxx") and len(first) == 200
    assert len(tag) == 10
