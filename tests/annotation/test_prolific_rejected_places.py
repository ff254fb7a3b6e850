"""A rejected Prolific submission: Prolific re-offers its place, so its task slot is opened again.

Prolific's submission object documents REJECTED as "The participant is not paid. The study place
becomes available for another participant." The participant who takes that place must find work,
and the HIT must end with as many counted ratings as the survey asks for.
"""

import json

import httpx
import pytest
from django.test import Client

from annotation.crowd.prolific.study import slot_count
from annotation.models import Annotator, Assignment, ProlificSubmission
from annotation.quality.selectors import accepted_ratings
from annotation.selectors.studies import survey_progress
from annotation.services.extend import survey_extend
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    confirmed_assignment,
    deliver,
    do_task,
    entry,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    submissions_answer,
)

pytestmark = pytest.mark.django_db

MESSAGE = "You gave every reply the same score and missed the instructed check that asked for a 2. " * 2


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher, n_hits=2, assignments=2)  # 4 slots, 4 places
    publish(api, survey)
    return survey


def reject_route(api):
    return api.post(f"submissions/{session(1)}/transition/").mock(
        return_value=httpx.Response(200, json={"id": session(1), "status": "REJECTED"})
    )


def new_participant_works(survey, n):
    """Participant n opens the study in a fresh browser: True when they got a task and handed it in."""
    browser = Client()
    started = entry(browser, survey, participant=pid(n), session_id=session(n))
    if started.status_code != 302:
        return False
    do_task(browser, started)
    return True


def test_a_rejection_on_the_review_page_gives_the_reoffered_place_a_task(client, survey, api):
    rejected = confirmed_assignment(client, survey, api)
    reject_route(api)
    provider().reject(assignment=rejected, reason=MESSAGE, category="FAILED_CHECK")

    rejected.refresh_from_db()
    assert rejected.status == Assignment.Status.REJECTED and rejected.replaced
    reopened = Assignment.objects.get(hit=rejected.hit, slot=2)  # after the HIT's slots 0 and 1
    assert reopened.status == Assignment.Status.OPEN and reopened.annotator is None
    assert slot_count(survey) == 4  # still one slot per place: the rejected one counts no more
    assert survey_progress(survey=survey)["hits_done"] == 0

    # Prolific's four places now hold three live submissions and one re-offered place: four people
    # finish a task, and the HITs end with two counted ratings sets each.
    assert all(new_participant_works(survey, n) for n in (2, 3, 4, 5))
    assert not new_participant_works(survey, 6)  # every place taken: this one is asked to return it
    assert survey_progress(survey=survey)["hits_done"] == 2
    for hit in survey.hits.all():
        counted = hit.assignments.filter(status=Assignment.Status.SUBMITTED)
        assert counted.count() == 2


def test_a_rejection_recorded_again_by_page_sync_and_webhook_opens_one_slot(client, survey, api, settings):
    rejected = confirmed_assignment(client, survey, api)
    route = reject_route(api)
    provider().reject(assignment=rejected, reason=MESSAGE, category="FAILED_CHECK")
    provider().reject(assignment=rejected, reason=MESSAGE, category="FAILED_CHECK")  # a double click
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "REJECTED")))
    )
    provider().sync(survey=survey)
    event = {
        "event_id": "evt-reject-1",
        "event_type": "submission.status.change",
        "resource_id": session(1),
        "participant_id": pid(1),
        "study_id": STUDY_ID,
        "status": "REJECTED",
    }
    delivered = deliver(client, event)
    assert delivered.status_code == 200
    assert route.call_count == 1
    assert Assignment.objects.filter(hit__survey=survey).count() == 5
    assert Assignment.objects.filter(hit__survey=survey, replaced=True).count() == 1
    assert slot_count(survey) == 4


def test_a_rejection_made_in_prolifics_own_app_reaches_the_analysis_with_the_next_sync(client, survey, api):
    confirmed_assignment(client, survey, api)
    assert accepted_ratings(dataset=survey.dataset, surveys=[survey]).exists()
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "REJECTED")))
    )
    provider().sync(survey=survey)
    assert ProlificSubmission.objects.get().status == "REJECTED"
    assert not accepted_ratings(dataset=survey.dataset, surveys=[survey]).exists()
    work = Assignment.objects.get(annotator__worker_id=pid(1))
    assert work.status == Assignment.Status.REJECTED and work.replaced
    assert Assignment.objects.filter(hit=work.hit, status=Assignment.Status.OPEN).count() == 2  # its other + new


def test_an_unconfirmed_session_reported_rejected_opens_no_slot(client, survey, api):
    # Prolific lists the session under someone else: the row is not confirmed, so its status is
    # recorded but nothing about the work is decided from it.
    do_task(client, entry(client, survey, participant=pid(1), session_id=session(1)))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(9), "REJECTED")))
    )
    provider().sync(survey=survey)
    assert ProlificSubmission.objects.get().confirmed is False
    assert Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.SUBMITTED).count() == 1
    assert Assignment.objects.filter(hit__survey=survey).count() == 4


def test_prolifics_own_approval_leaves_work_the_attention_policy_rejected_out(client, survey, api):
    survey.attention_policy = survey.AttentionPolicy.REJECT
    survey.save()
    careless = Client()
    started = entry(careless, survey, participant=pid(1), session_id=session(1))
    slot = Assignment.objects.get(token=started["Location"].rstrip("/").split("/")[-1])
    careless.post(started["Location"], {f"score-{item.pk}-overall": "5" for item in slot.hit.items.all()})
    do_task(client, entry(client, survey, participant=pid(2), session_id=session(2)))
    # Prolific approves both by itself once the review period is over.
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(
            200, json=submissions_answer((session(1), pid(1), "APPROVED"), (session(2), pid(2), "APPROVED"))
        )
    )
    provider().sync(survey=survey)
    statuses = dict(Assignment.objects.filter(annotator__isnull=False).values_list("annotator__worker_id", "status"))
    assert statuses == {pid(1): Assignment.Status.REJECTED, pid(2): Assignment.Status.APPROVED}
    assert Assignment.objects.filter(hit__survey=survey).count() == 4  # an approval re-offers no place


def test_more_ratings_per_response_after_a_rejection_number_their_slots_after_the_reopened_one(client, survey, api):
    rejected = confirmed_assignment(client, survey, api)
    reject_route(api)
    provider().reject(assignment=rejected, reason=MESSAGE, category="FAILED_CHECK")
    places = api.patch(f"studies/{STUDY_ID}/").mock(
        side_effect=lambda request: httpx.Response(200, json={"id": STUDY_ID, **json.loads(request.content)})
    )
    survey_extend(survey=survey, per_hit=1, from_assignments=2)
    slots = {hit.pk: sorted(hit.assignments.values_list("slot", flat=True)) for hit in survey.hits.all()}
    assert slots[rejected.hit_id] == [0, 1, 2, 3]
    assert sorted(len(numbers) for numbers in slots.values()) == [3, 4]
    assert slot_count(survey) == 6
    assert json.loads(places.calls.last.request.content) == {"total_available_places": 6}


@pytest.mark.usefixtures("fresh_cache")  # no debounce key of an earlier test's survey holds the recompute back
def test_the_quality_page_says_rejected_not_accepted_for_a_participant_prolific_rejected(
    client, survey, api, django_capture_on_commit_callbacks
):
    confirmed_assignment(client, survey, api)
    assert new_participant_works(survey, 2)
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(
            200, json=submissions_answer((session(1), pid(1), "REJECTED"), (session(2), pid(2), "AWAITING REVIEW"))
        )
    )
    provider().sync(survey=survey)
    client.force_login(survey.owner)
    with django_capture_on_commit_callbacks(execute=True):  # the report computed, as a worker would
        client.get(f"/surveys/{survey.pk}/quality/")
    page = client.get(f"/surveys/{survey.pk}/quality/").content.decode()
    rows = {
        row.split("</a>")[0].rsplit(">", 1)[-1]: row for row in page.split("<tr>")[1:] if "quality/annotators" in row
    }
    assert "work rejected" in rows[pid(1)] and "accepted" not in rows[pid(1)]
    assert "accepted" in rows[pid(2)] and "rejected" not in rows[pid(2)]
    rejected = Annotator.objects.get(worker_id=pid(1))
    single = client.get(f"/surveys/{survey.pk}/quality/annotators/{rejected.pk}/")
    assert "work rejected" in single.content.decode()
