"""Browser walk F04 and F15: a failing judge says why (host and reason) on its page and on the
dataset's Metrics page, its page updates itself while a run is queued or running, and its counters
add up (no "From cache" beyond the cache, "10 failed, 8 not sent", no "every reply gave a score"
before any reply came, a status on every runs row). Rating and pairwise judges."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from scoring.judges import prompts
from scoring.judges.client import JudgeRequestFailed
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage, MetricRun
from scoring.services.judges.pairwise import judge_dataset_pairs
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS, make_judge, scoring_server
from tests.scoring.test_judges_pairwise_study import picks_the_good_reply, study  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick(settings):
    settings.JUDGE_MAX_RETRIES = 0
    settings.JUDGE_TIMEOUT_SECONDS = 5


def _page(client, judge):
    return client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()


def _text(html, element_id, tag="p|dd|td|span"):
    """The text of the element with this id (tags dropped, spaces squeezed)."""
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</({tag})>', html, re.S)
    assert match, element_id
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(1)).split())


def test_a_rating_judge_that_cannot_reach_its_endpoint_says_why_on_its_page_and_the_metrics_page(
    researcher, researcher_client, dead_url, django_capture_on_commit_callbacks
):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    judge = Judge.objects.create(owner=researcher, name="qwen-local", base_url=dead_url, model="m", concurrency=1)
    with pytest.raises(JudgeRequestFailed), django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["judge:qwen-local"]})
    # 12 prompts: 3 tried (each refused), then the endpoint given up and 9 not sent; counted apart
    expected = "3 failed, 9 not sent, 0 answered, of 12 prompt(s) not in the cache; first failure: cannot reach"
    metrics = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    assert expected in _text(metrics, "run-error") and dead_url in _text(metrics, "run-error")
    html = _page(researcher_client, judge)
    failure = _text(html, "judge-failure", tag="div")
    assert "The run on toy failed" in failure and f"cannot reach {dead_url}" in failure and expected in failure
    assert "of 12 prompt(s) failed" not in html  # the old "12 of 12 failed … the other 9 were not sent"
    # no reply came: nothing "gave a score"
    assert "every reply gave" not in html and "No reply yet" in _text(html, "unparseable")
    # the runs row has a status, and its counts agree with the cache line
    row = html.split('id="judge-usage"', 1)[1].split("</tbody>", 1)[0]
    assert re.search(r'class="judge-state"[^>]*>failed</td>\s*<td class="num">0</td><td class="num">0</td>', row)
    assert "0 prompts answered" in _text(html, "judge-cache")


def test_a_pairwise_judging_that_fails_says_why_on_the_judge_page_until_one_succeeds(
    study,  # noqa: F811
    researcher_client,
    dead_url,
    chat_server,
    django_capture_on_commit_callbacks,
):
    judge = make_judge(study.owner, chat_server, name="pair-judge", template=prompts.PAIRWISE, concurrency=1)
    Judge.objects.filter(pk=judge.pk).update(base_url=dead_url)
    with pytest.raises(JudgeRequestFailed), django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(reverse("scoring:judge_dataset_pairs", args=[judge.pk]), {"dataset": study.pk})
    html = _page(researcher_client, judge)
    failure = _text(html, "judge-failure", tag="div")
    assert "The judging of the pairs of ab failed" in failure and f"cannot reach {dead_url}" in failure
    assert "3 failed, 9 not sent, 0 answered, of 12 prompt(s)" in failure
    figures = html.split('id="judge-pairs-figures"', 1)[1].split("</table>", 1)[0]
    assert "failed: see why above" in figures and "not finished (a request failed" not in figures
    assert "every reply gave" not in html and "No reply yet" in html
    usage = JudgeUsage.objects.get(judge=judge)
    # F04 read "Prompts 720, From cache 480, Requests 0" beside "Cache: 0 prompts answered"
    assert (usage.prompts, usage.cached, usage.requests) == (0, 0, 0) and not JudgeCacheEntry.objects.exists()
    assert "0 prompts answered" in _text(html, "judge-cache")
    # the endpoint comes back: the judging succeeds and the failure is no longer shown
    Judge.objects.filter(pk=judge.pk).update(base_url=chat_server.base_url)
    chat_server.answer = picks_the_good_reply
    judge_dataset_pairs(judge=Judge.objects.get(pk=judge.pk), dataset=study)
    html = _page(researcher_client, judge)
    assert 'id="judge-failure"' not in html and "every reply gave a winner (A or B)" in html
    assert "error" not in JudgeUsage.objects.get(judge=judge).figures


def test_the_judge_page_polls_its_progress_while_a_run_is_queued_and_stops_when_it_ends(
    researcher, researcher_client, chat_server
):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    chat_server.answer = scoring_server
    judge = make_judge(researcher, chat_server)
    run = MetricRun.objects.create(dataset=dataset, metrics=["judge:local"], total_chunks=1)
    JudgeUsage.objects.create(judge=judge, run=run)
    html = _page(researcher_client, judge)
    progress_url = reverse("scoring:judge_progress", args=[judge.pk])
    assert f'id="judge-live" role="status" data-progress-url="{progress_url}"' in html
    # the poller is a file of its own (CSP script-src 'self'), no inline script
    assert "scoring/judge_progress.js" in html and not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    progress = researcher_client.get(progress_url).json()
    assert progress["active"] is True and progress["rows"][0]["state"] == "queued"
    MetricRun.objects.filter(pk=run.pk).update(status=MetricRun.Status.DONE)
    progress = researcher_client.get(progress_url).json()
    assert progress["active"] is False and progress["rows"][0]["state"] == "done"
    html = _page(researcher_client, judge)
    assert 'id="judge-live"' not in html and "judge_progress.js" not in html


def test_a_queued_judging_of_pairs_is_polled_too_and_the_progress_is_the_owners_alone(
    researcher, researcher_client, other_researcher, client, chat_server
):
    judge = make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    JudgeUsage.objects.create(judge=judge, label="pairs of ab", queued_at=timezone.now())
    progress_url = reverse("scoring:judge_progress", args=[judge.pk])
    assert researcher_client.get(progress_url).json()["rows"][0]["state"] == "queued or running"
    assert 'id="judge-live"' in _page(researcher_client, judge)
    client.force_login(other_researcher)
    assert client.get(progress_url).status_code == 404
