"""The MTurk frame's drafts: kept only for the open assignment whose token is posted, only answer
fields, restored on the next load of the HIT, dropped once the assignment is submitted."""

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.models import Assignment, MTurkDraft, Survey
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = pytest.mark.django_db
SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def opened(client, researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=2, contexts_per_hit=2, provider="mturk", launch=False, ask_reason=True
    )
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
    hit = survey.hits.get()
    hit.external_id = "3HIT" + "0" * 26
    hit.save()
    turk = {"assignmentId": "3ASGD", "hitId": hit.external_id, "workerId": "AWORKERD", "turkSubmitTo": SANDBOX}
    task = reverse("annotation:mturk_task", args=[survey.token])
    client.get(task, turk)
    slot = Assignment.objects.get(external_id="3ASGD")
    return {
        "task": task,
        "draft": reverse("annotation:mturk_draft", args=[survey.token]),
        "turk": {**turk, "assignment_token": slot.token},
        "slot": slot,
    }


def test_a_draft_keeps_only_answer_fields_and_fills_the_page_when_the_hit_is_loaded_again(client, opened):
    item = next(iter(pairwise_answers(opened["slot"])))
    fields = {
        f"score-{item}-overall": "b",
        f"reason-{item}": "B is kinder",
        "evil": "x" * 10,
        "csrfmiddlewaretoken": "t",
    }
    response = client.post(opened["draft"], {**opened["turk"], **fields})
    assert response.status_code == 204
    kept = MTurkDraft.objects.get(assignment=opened["slot"]).fields
    assert kept == {f"score-{item}-overall": "b", f"reason-{item}": "B is kinder"}
    page = client.get(opened["task"], {key: opened["turk"][key] for key in ("assignmentId", "hitId", "workerId")})
    html = page.content.decode()
    assert 'value="B is kinder"' in html and 'data-restored="1"' in html
    assert f'name="score-{item}-overall" value="b" data-key="2" required checked>' in html


def test_a_restored_draft_keeps_the_time_already_spent_on_each_item(client, opened):
    # task.js adds the time of each new answer to the item's hidden seconds field: restored, the
    # time spent before the reload is kept instead of starting again from nothing
    first, second = list(pairwise_answers(opened["slot"]))[:2]
    fields = {f"score-{first}-overall": "a", f"seconds-{first}": "41.5", f"seconds-{second}": "1e9"}
    client.post(opened["draft"], {**opened["turk"], **fields})
    page = client.get(opened["task"], {key: opened["turk"][key] for key in ("assignmentId", "hitId", "workerId")})
    html = page.content.decode()
    assert f'<input type="hidden" name="seconds-{first}" value="41.50" class="seconds">' in html
    # a value that is no number of seconds (over a day) is not restored
    assert f'<input type="hidden" name="seconds-{second}" value="" class="seconds">' in html


def test_a_draft_needs_the_assignments_token_and_an_open_assignment(client, opened):
    wrong = {**opened["turk"], "assignment_token": "guess"}
    assert client.post(opened["draft"], {**wrong, "reason-1": "x"}).status_code == 404
    assert client.get(opened["draft"]).status_code == 405
    too_many = {f"reason-{n}": "x" for n in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    assert client.post(opened["draft"], {**opened["turk"], **too_many}).status_code == 400  # Django's own cap
    assert not MTurkDraft.objects.exists()


def test_submitting_the_assignment_drops_its_draft_and_a_later_draft_is_refused(client, opened):
    assert client.post(opened["draft"], {**opened["turk"], "reason-1": "x"}).status_code == 204
    data = dict(opened["turk"])
    for item_id, answer in pairwise_answers(opened["slot"]).items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
    done = client.post(opened["task"], data).content.decode()
    assert "mturk-external-submit" in done and f'data-save-key="{opened["slot"].token}"' in done
    assert not MTurkDraft.objects.exists()
    refused = client.post(opened["draft"], {**opened["turk"], "reason-1": "y"})
    assert refused.status_code == 409 and "no longer open" in refused.content.decode()
