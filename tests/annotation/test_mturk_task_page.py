"""The task page inside MTurk's frame: preview, a worker completing a HIT, and handing it back."""

import pytest
from django.urls import reverse

from annotation.models import Annotator, Assignment, Rating
from annotation.models.ratings import AttentionAnswer
from tests.annotation.mturk_helpers import make_survey

SANDBOX_SUBMIT = "https://workersandbox.mturk.com"


@pytest.fixture
def survey(researcher):
    survey = make_survey(researcher, n_hits=2)
    for n, hit in enumerate(survey.hits.order_by("position")):
        hit.external_id = f"3HIT{n:026d}"
        hit.save()
    return survey


def task_url(survey):
    return reverse("annotation:mturk_task", args=[survey.token])


def params(survey, *, assignment="3ASGA", worker="AWORKER1", hit_position=0, submit_to=SANDBOX_SUBMIT):
    return {
        "assignmentId": assignment,
        "hitId": survey.hits.get(position=hit_position).external_id,
        "workerId": worker,
        "turkSubmitTo": submit_to,
    }


def answers(slot, score=4, check=2):
    data = {
        "assignmentId": slot.external_id,
        "hitId": slot.hit.external_id,
        "workerId": slot.annotator.worker_id,
        "turkSubmitTo": SANDBOX_SUBMIT,
        "assignment_token": slot.token,
    }
    for item in slot.hit.items.all():
        data[f"score-{item.pk}-overall"] = str(check if item.kind == "instructed" else score)
        data[f"seconds-{item.pk}"] = "14"  # the page's script records the time spent per item
    return data


def test_preview_shows_the_task_and_accepts_nothing(client, survey):
    page = client.get(task_url(survey), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "3HIT" + "0" * 26})
    assert page.status_code == 200
    html = page.content.decode()
    assert "Preview: accept the HIT" in html
    assert "i am fine 0" in html
    assert "&lt;b&gt;what&lt;/b&gt; 0" in html  # annotator text is escaped
    assert "Submit answers" not in html
    assert "disabled" in html
    assert not Annotator.objects.exists()
    assert not Assignment.objects.exclude(external_id="").exists()


def test_preview_post_stores_nothing(client, survey):
    slot_items = survey.hits.get(position=0).items.all()
    data = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", **{f"score-{i.pk}-overall": "3" for i in slot_items}}
    page = client.post(task_url(survey), data)
    assert "Preview" in page.content.decode()
    assert Rating.objects.count() == 0


def test_task_page_is_frameable_by_mturk_only(client, survey):
    page = client.get(task_url(survey), params(survey))
    assert page.status_code == 200
    assert "X-Frame-Options" not in page.headers
    assert "frame-ancestors https://www.mturk.com " in page["Content-Security-Policy"]
    assert "https://workersandbox.mturk.com" in page["Content-Security-Policy"]
    other = client.get(reverse("login"))
    assert other["X-Frame-Options"] == "DENY"


def test_a_worker_completes_a_hit_and_the_browser_hands_it_back_to_mturk(client, survey):
    page = client.get(task_url(survey), params(survey, assignment="3ASGA", worker="AWORKER1"))
    assert page.status_code == 200
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    assert slot.status == Assignment.Status.ACTIVE
    assert (slot.annotator.provider, slot.annotator.worker_id) == ("mturk", "AWORKER1")
    assert slot.token in page.content.decode()

    done = client.post(task_url(survey), answers(slot, score=4, check=2))
    assert done.status_code == 200
    html = done.content.decode()
    assert f'action="{SANDBOX_SUBMIT}/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="3ASGA"' in html
    assert 'data-autosubmit="1"' in html

    slot.refresh_from_db()
    assert slot.status == Assignment.Status.SUBMITTED
    ratings = Rating.objects.filter(assignment=slot)
    assert sorted(ratings.values_list("score", flat=True)) == [4, 4]
    assert all(r.seconds == 14.0 for r in ratings)
    check = AttentionAnswer.objects.get(assignment=slot)
    assert (check.score, check.passed) == (2, True)
    assert slot.flagged is False


def test_a_double_submit_stores_each_rating_once(client, survey):
    client.get(task_url(survey), params(survey))
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    client.post(task_url(survey), answers(slot))
    again = client.post(task_url(survey), answers(slot, score=1))
    assert "externalSubmit" in again.content.decode()
    assert list(Rating.objects.values_list("score", flat=True)) == [4, 4]


def test_submission_with_an_unanswered_item_is_refused_and_stores_nothing(client, survey):
    client.get(task_url(survey), params(survey))
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    data = answers(slot)
    del data[next(key for key in data if key.startswith("score-"))]
    page = client.post(task_url(survey), data)
    assert page.status_code == 400
    assert "Please answer every item" in page.content.decode()
    assert Rating.objects.count() == 0
    slot.refresh_from_db()
    assert slot.status == Assignment.Status.ACTIVE


def test_scores_outside_the_scale_are_refused(client, survey):
    client.get(task_url(survey), params(survey))
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    page = client.post(task_url(survey), answers(slot, score=9))
    assert page.status_code == 400
    assert Rating.objects.count() == 0


def test_a_post_without_the_assignment_token_is_refused(client, survey):
    client.get(task_url(survey), params(survey))
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    data = answers(slot)
    data["assignment_token"] = "forged"
    assert client.post(task_url(survey), data).status_code == 404
    assert Rating.objects.count() == 0


def test_another_worker_cannot_take_over_an_assignment_id(client, survey):
    client.get(task_url(survey), params(survey, worker="AWORKER1"))
    page = client.get(task_url(survey), params(survey, worker="AINTRUDER"))
    assert page.status_code == 409
    assert Assignment.objects.get(external_id="3ASGA").annotator.worker_id == "AWORKER1"


def test_turk_submit_to_outside_mturk_falls_back_to_the_survey_endpoint(client, survey):
    client.get(task_url(survey), params(survey, submit_to="https://evil.example.com"))
    slot = Assignment.objects.select_related("annotator", "hit").get(external_id="3ASGA")
    data = answers(slot)
    data["turkSubmitTo"] = "https://evil.example.com"
    html = client.post(task_url(survey), data).content.decode()
    assert "evil.example.com" not in html
    assert f"{SANDBOX_SUBMIT}/mturk/externalSubmit" in html


def test_workers_beyond_the_hits_max_assignments_are_refused(client, survey):
    for n in range(4):
        client.get(task_url(survey), params(survey, assignment=f"3ASG{n}", worker=f"AWORKER{n}"))
    hit = survey.hits.get(position=0)
    assert sorted(Assignment.objects.filter(hit=hit).values_list("slot", flat=True)) == [0, 1, 2]
    assert Assignment.objects.filter(hit=hit, status=Assignment.Status.ACTIVE).count() == 3
    assert not Assignment.objects.filter(external_id="3ASG3").exists()


def test_unknown_hit_is_refused(client, survey):
    page = client.get(task_url(survey), {**params(survey), "hitId": "NOPE"})
    assert page.status_code == 400
    assert not Annotator.objects.exists()
