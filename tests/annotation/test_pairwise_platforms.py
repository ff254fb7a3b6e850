"""A pairwise survey on the link-platform and Prolific providers: a participant enters, gets pairs,
answers, and the judgements count in no analysis until the platform's confirmation."""

import json
from io import StringIO

import httpx
import pytest
from django.core.management import call_command

from analysis.services.freshness import report_input_parts
from annotation.crowd.link_platform import platform_settings
from annotation.crowd.mturk.provider import settings_for as mturk_settings_for
from annotation.crowd.prolific.study import study_settings
from annotation.kinds.pairwise.selectors import accepted_judgements
from annotation.models import Assignment, HITItem, PairwiseJudgement, Survey
from tests.annotation.link_helpers import started_task
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.prolific_helpers import STUDY_ID, entry, pid, provider, publish, session, submissions_answer
from tests.annotation.studies_helpers import make_survey

pytestmark = pytest.mark.django_db
COMPLETE = "https://connect.example.org/complete?code={code}"


def _on(survey, provider_name):
    Survey.objects.filter(pk=survey.pk).update(provider=provider_name)
    survey.refresh_from_db()
    return survey


def answer_pairs(client, started):
    """On the task page a claim redirected to: check it shows pairs (no system names), answer them all."""
    page = client.get(started["Location"]).content.decode()
    assert "<title>Comparison task · RateLab</title>" in page and "<h1>Compare replies to conversations</h1>" in page
    slot = Assignment.objects.get(token=started["Location"].rstrip("/").split("/")[-1])
    pair = slot.hit.items.filter(kind=HITItem.Kind.PAIR).first()
    assert pair is not None and f'name="score-{pair.pk}-overall" value="a"' in page
    assert pair.response.text in page and pair.response_b.text in page
    for name in ("hred", "tfidf", "human", "secret reference"):
        assert name not in page
    data = {}
    for item_id, answer in pairwise_answers(slot).items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "3.0"
    assert client.post(started["Location"], data).status_code == 302
    return slot


def counted(survey):
    return accepted_judgements(dataset=survey.dataset, surveys=[survey], apply_exclusions=False).count()


def test_a_pairwise_survey_on_a_link_platform_counts_a_participants_judgements_once_confirmed(
    researcher, client, tmp_path
):
    survey = _on(make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="ab-link"), "link")
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    started = client.post(f"/l/{survey.token}/", {"workerId": "W1"})
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    slot = answer_pairs(client, started)
    stored = PairwiseJudgement.objects.filter(survey=survey, annotator__worker_id="W1").count()
    assert stored > 0 and slot.annotator.worker_id == "W1"
    assert counted(survey) == 0  # not confirmed yet
    before = report_input_parts(dataset=survey.dataset)
    ids = tmp_path / "completed.txt"
    ids.write_text("W1\n", encoding="utf-8")
    call_command("link_confirm", "--survey", "ab-link", str(ids), stdout=StringIO(), stderr=StringIO())
    assert counted(survey) == stored
    # the confirmation adds no judgement and no decision, yet the report's inputs change: it is stale
    after = report_input_parts(dataset=survey.dataset)
    assert after["pairwise"] == before["pairwise"] and after["pairwise_accepted"] != before["pairwise_accepted"]


def test_a_pairwise_survey_on_prolific_counts_a_participants_judgements_once_prolific_lists_the_session(
    researcher, client, api
):
    survey = _on(make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="ab-prolific"), "prolific")
    study_settings(survey, reward_cents=150, minutes=10)
    created = publish(api, survey)
    # Prolific advertises the study as what it is: a comparison, not a 1-5 rating
    body = json.loads(created.calls.last.request.content)
    assert body["name"] == "Compare replies in short conversations (ab-prolific)"
    assert body["description"] == (
        "Read short conversations and choose the better of two candidate replies, or say they are about the"
        " same. Some items check that you read carefully."
    )
    started = entry(client, survey, participant=pid(1), session_id=session(1))
    assert started.status_code == 302 and started["Location"].startswith("/a/")
    answer_pairs(client, started)
    stored = PairwiseJudgement.objects.filter(survey=survey, annotator__worker_id=pid(1)).count()
    assert stored > 0 and counted(survey) == 0
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(200, json=submissions_answer((session(1), pid(1), "AWAITING REVIEW")))
    )
    assert provider().sync(survey=survey)["confirmed"] == 1
    assert counted(survey) == stored


def test_the_start_page_and_mturk_name_the_task_by_its_type(researcher, client):
    pairwise = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="ab-words", allow_tie=False)
    page = client.get(f"/s/{pairwise.token}/").content.decode()
    assert "<title>Join a comparison study · RateLab</title>" in page
    assert "<h1>Compare replies to conversations</h1>" in page and "pairs of replies</strong> to compare" in page
    assert "Rate replies" not in page and "to rate" not in page
    hit_type = mturk_settings_for(pairwise)
    assert hit_type.title == "Compare replies in short conversations (ab-words)"
    assert hit_type.description == "Read short conversations and choose the better of two candidate replies."
    rating = make_survey(
        researcher, n_contexts=3, name="rate-words", aspects=[{"key": "fluency", "scale_min": 0, "scale_max": 3}]
    )
    rate_page = client.get(f"/s/{rating.token}/").content.decode()
    assert "<h1>Rate replies to conversations</h1>" in rate_page and "replies</strong> to rate" in rate_page
    # two questions on different scales: the description names none
    assert mturk_settings_for(rating).description == (
        "Read short conversations and judge how appropriate each candidate reply is."
    )


def test_every_annotator_page_names_the_task_by_its_type(researcher, client, api):
    """The platforms' entry pages, the no-work page and the task page said 'Rating study' /
    'Rating task' (or worded their heading inline) whatever the survey's type."""
    pairwise = _on(make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="ab-heads"), "link")
    platform_settings(pairwise, participant_param="workerId", completion_url=COMPLETE)
    link_page = client.get(f"/l/{pairwise.token}/", {"workerId": "W1"}).content.decode()
    assert "<h1>Comparison study</h1>" in link_page
    refused = client.get(f"/s/{pairwise.token}/")  # a link survey's own start link is not active
    assert "This link is not active." in refused.content.decode()
    assert "<h1>Comparison study</h1>" in refused.content.decode() and "Rating study" not in refused.content.decode()
    on_prolific = _on(make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="ab-p"), "prolific")
    study_settings(on_prolific, reward_cents=150, minutes=10)
    publish(api, on_prolific)
    welcome = entry(client, on_prolific, participant=pid(1), session_id=session(1), method="get")
    assert "<h1>Comparison study</h1>" in welcome.content.decode()
    write = make_survey(
        researcher, n_contexts=2, contexts_per_hit=2, name="w", task_type="write", write_system_name="crowd"
    )
    started = client.post(f"/s/{write.token}/", {"action": "start"})
    page = client.get(started_task(started)).content.decode()
    assert "<title>Writing task · RateLab</title>" in page and "<h1>Write replies to conversations</h1>" in page
    rating = make_survey(researcher, n_contexts=3, name="r")
    Survey.objects.filter(pk=rating.pk).update(status=Survey.Status.CLOSED)
    closed = client.get(f"/s/{rating.token}/").content.decode()
    assert "<h1>Rating study</h1>" in closed and "not accepting work" in closed
