"""A pairwise survey on Mechanical Turk: the task page inside MTurk's frame shows the pairs and a
worker's submission is stored as judgements, through the same views as a rating HIT."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, PairwiseJudgement, Survey
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = pytest.mark.django_db
SANDBOX_SUBMIT = "https://workersandbox.mturk.com"


def test_a_turk_worker_compares_pairs_and_the_hit_goes_back_to_mturk(client, researcher):
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, provider="mturk", launch=False)
    # Published elsewhere (tests of publish fake boto3); here the HIT is live with MTurk's id.
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
    hit = survey.hits.get()
    hit.external_id = "3HIT" + "0" * 26
    hit.save()
    turk = {"assignmentId": "3ASGA", "hitId": hit.external_id, "workerId": "AWORKER1", "turkSubmitTo": SANDBOX_SUBMIT}
    url = reverse("annotation:mturk_task", args=[survey.token])
    page = client.get(url, turk).content.decode()
    assert "Reply 1:" in page and "hred" not in page
    slot = Assignment.objects.select_related("hit__survey", "annotator").get(external_id="3ASGA")
    data = {**turk, "assignment_token": slot.token}
    for item_id, answer in pairwise_answers(slot, choose=lambda item: "tie").items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "5"
    done = client.post(url, data).content.decode()
    assert f'action="{SANDBOX_SUBMIT}/mturk/externalSubmit"' in done
    assert PairwiseJudgement.objects.filter(assignment=slot, winner="tie").count() == 2 * 6
