"""Removing an LLM judge: a confirm page naming what goes, POST with CSRF only, the owner's alone,
refused (409, saying why) while a metrics run or a judging of pairs uses it, all rows in one go."""

import contextlib
import html
import threading

import pytest
from django.contrib.admin.models import LogEntry
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client
from django.urls import reverse

from scoring.judges import prompts
from scoring.judges.pairwise import PairItem
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage, MetricRun, MetricScore
from scoring.services.judges.judging import judge_pairs
from scoring.services.judges.registry import JudgeRefusal
from scoring.services.judges.remove import JudgeBusy, judge_delete
from scoring.services.judges.turns import judge_pairs_turn
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS

pytestmark = pytest.mark.django_db


def _judge(owner, name="gone", template=prompts.RATING, dataset_name="toy"):
    """A judge with two cached answers, a priced usage record and a score on each of the owner's responses."""
    dataset = load_dataset_records(records=RECORDS, name=dataset_name, owner=owner)
    judge = Judge.objects.create(
        owner=owner,
        name=name,
        base_url="http://127.0.0.1:9/v1",
        model="tiny-judge",
        template=template,
        price_per_million_prompt_tokens=2,
        price_per_million_completion_tokens=10,
    )
    for n in range(2):
        JudgeCacheEntry.objects.create(judge=judge, template_version="v1", prompt_hash=f"{n}" * 64, values=[3])
    run = MetricRun.objects.create(dataset=dataset, metrics=[judge.metric_name], status="done")
    JudgeUsage.objects.create(
        judge=judge, run=run, prompts=12, requests=12, prompt_tokens=1_000_000, completion_tokens=100_000
    )
    if template != prompts.PAIRWISE:
        MetricScore.objects.bulk_create(
            MetricScore(response=response, metric=judge.metric_name, version="v", value=3.0)
            for response in dataset.contexts.first().responses.all()
        )
    return judge


def _url(judge):
    return reverse("scoring:judge_remove", args=[judge.pk])


@pytest.fixture
def judge(researcher):
    return _judge(researcher)


def test_the_confirm_page_names_the_cache_the_scores_and_the_usage_and_a_post_removes_them_all(
    researcher_client, researcher, judge
):
    dataset = MetricRun.objects.get().dataset
    response = dataset.contexts.first().responses.first()
    MetricScore.objects.create(response=response, metric="bleu4", version="1", value=0.1)
    confirm = html.unescape(researcher_client.get(_url(judge)).content.decode())
    assert "This cannot be undone" in confirm and 'id="confirm-remove"' in confirm
    assert "its 2 cached answers" in confirm and "its 2 stored judge:gone scores" in confirm.replace(
        '<code class="code-wrap">', ""
    ).replace("</code>", "")
    assert "its 1 usage record (12 requests, 1000000 prompt and 100000 completion tokens, cost 3.0000)" in confirm
    page = researcher_client.post(_url(judge), follow=True)
    assert page.redirect_chain == [(reverse("scoring:judges"), 302)]
    assert "Judge gone removed, with its cached replies and its 2 judge:gone scores." in html.unescape(
        page.content.decode()
    )
    assert not Judge.objects.exists() and not JudgeCacheEntry.objects.exists() and not JudgeUsage.objects.exists()
    assert list(MetricScore.objects.values_list("metric", flat=True)) == ["bleu4"]


def test_a_get_only_asks_and_the_judge_page_links_to_the_question_without_a_remove_form(researcher_client, judge):
    detail = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert f'href="{_url(judge)}"' in detail and f'action="{_url(judge)}"' not in detail
    assert researcher_client.get(_url(judge)).status_code == 200
    assert Judge.objects.filter(pk=judge.pk).exists() and MetricScore.objects.count() == 2


def test_another_researcher_and_staff_get_a_404_on_the_question_and_the_removal(judge, other_researcher, admin_user):
    for user in (other_researcher, admin_user):
        client = Client()
        client.force_login(user)
        assert client.get(_url(judge)).status_code == 404
        assert client.post(_url(judge)).status_code == 404
    assert Judge.objects.filter(pk=judge.pk).exists() and JudgeCacheEntry.objects.count() == 2


def test_a_removal_without_the_csrf_token_is_refused(researcher, judge):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(_url(judge)).status_code == 403
    assert Judge.objects.filter(pk=judge.pk).exists()


def test_another_researchers_same_named_judge_and_scores_are_kept(researcher_client, judge, other_researcher):
    theirs = _judge(other_researcher, name="gone", dataset_name="theirs")
    researcher_client.post(_url(judge))
    assert list(Judge.objects.all()) == [theirs] and JudgeCacheEntry.objects.filter(judge=theirs).count() == 2
    assert MetricScore.objects.filter(metric="judge:gone").count() == 2


@pytest.mark.parametrize("status", ["queued", "running"])
def test_a_judge_whose_metric_an_open_run_computes_is_not_removed_and_the_page_says_why(
    researcher_client, judge, status
):
    dataset = MetricRun.objects.get().dataset
    run = MetricRun.objects.create(dataset=dataset, metrics=["bleu4", "judge:gone"], status=status)
    confirm = researcher_client.get(_url(judge)).content.decode()
    assert f"metrics run {run.pk}, {status}" in confirm and 'id="confirm-remove"' not in confirm
    response = researcher_client.post(_url(judge))
    assert response.status_code == 409
    assert f"Judge gone is scoring dataset toy (metrics run {run.pk}, {status})" in response.content.decode()
    assert Judge.objects.filter(pk=judge.pk).exists() and JudgeCacheEntry.objects.count() == 2
    assert MetricScore.objects.count() == 2 and JudgeUsage.objects.count() == 1


def test_an_open_run_of_other_metrics_does_not_hold_the_judge(researcher_client, judge):
    MetricRun.objects.create(dataset=MetricRun.objects.get().dataset, metrics=["bleu4"], status="running")
    assert researcher_client.post(_url(judge)).status_code == 302
    assert not Judge.objects.exists()


@contextlib.contextmanager
def _judging_elsewhere(judge):
    """The judge's turn held by another thread, as a worker judging its pairs holds it: its own
    database connection on PostgreSQL, whose advisory locks a session may take again (held in
    the test's own connection, the removal's look would find the turn free)."""
    held, done = threading.Event(), threading.Event()

    def judging():
        try:
            with judge_pairs_turn(judge):
                held.set()
                done.wait(30)
        finally:
            connections.close_all()  # this thread's own connection

    thread = threading.Thread(target=judging)
    thread.start()
    try:
        assert held.wait(30), "the judging thread never took the judge's turn"
        yield
    finally:
        done.set()
        thread.join(30)


def test_a_pairwise_judge_judging_pairs_right_now_is_not_removed(researcher_client, researcher):
    judge = _judge(researcher, name="duel", template=prompts.PAIRWISE)
    with _judging_elsewhere(judge):  # what a judging of pairs holds while it runs
        response = researcher_client.post(_url(judge))
    assert response.status_code == 409
    assert "Judge duel is judging a dataset&#x27;s pairs right now" in response.content.decode()
    assert Judge.objects.filter(pk=judge.pk).exists() and JudgeCacheEntry.objects.count() == 2
    assert researcher_client.post(_url(judge)).status_code == 302  # once it has ended
    assert not Judge.objects.exists()


def test_a_pairwise_judge_confirm_page_names_its_verdicts_not_a_metric(researcher_client, researcher):
    judge = _judge(researcher, name="duel", template=prompts.PAIRWISE)
    confirm = researcher_client.get(_url(judge)).content.decode()
    assert "its pairwise verdicts" in confirm and "judge:duel" not in confirm


def test_a_judging_of_pairs_that_waited_for_a_removed_judge_asks_and_stores_nothing(researcher):
    judge = _judge(researcher, name="duel", template=prompts.PAIRWISE)
    stale = Judge.objects.get(pk=judge.pk)  # as the task loaded it before the removal
    judge_delete(judge=judge)
    with pytest.raises(JudgeRefusal, match="was removed"):
        judge_pairs(judge=stale, items=[PairItem(["hi"], "a", "b", "A")])
    assert not JudgeCacheEntry.objects.exists() and not JudgeUsage.objects.exists()


def test_the_command_refuses_a_judge_in_use_and_removes_nothing(researcher, judge):
    MetricRun.objects.create(dataset=MetricRun.objects.get().dataset, metrics=["judge:gone"], status="running")
    with pytest.raises(CommandError, match="Judge gone is scoring dataset toy"):
        call_command("judge_remove", "--name", "gone", "--owner", researcher.username)
    assert Judge.objects.filter(pk=judge.pk).exists()
    with pytest.raises(JudgeBusy):
        judge_delete(judge=judge)


def test_the_admin_refuses_a_judge_in_use_with_the_reason_and_no_success_message(client, admin_user, judge):
    MetricRun.objects.create(dataset=MetricRun.objects.get().dataset, metrics=["judge:gone"], status="queued")
    client.force_login(admin_user)
    page = client.post(reverse("admin:scoring_judge_delete", args=[judge.pk]), {"post": "yes"}, follow=True)
    text = html.unescape(page.content.decode())
    assert "Judge gone is scoring dataset toy" in text and "deleted successfully" not in text
    assert Judge.objects.filter(pk=judge.pk).exists()


def test_the_admin_bulk_delete_counts_only_the_judges_it_removed_and_names_the_busy_one(client, admin_user, researcher):
    busy, free = _judge(researcher, name="busy", dataset_name="a"), _judge(researcher, name="free", dataset_name="b")
    MetricRun.objects.create(dataset=busy.owner.datasets.get(name="a"), metrics=["judge:busy"], status="running")
    client.force_login(admin_user)
    changelist = reverse("admin:scoring_judge_changelist")
    chosen = {"action": "delete_selected", "_selected_action": [busy.pk, free.pk]}
    confirm = client.post(changelist, chosen).content.decode()
    assert "Are you sure you want to delete the selected judges?" in confirm and Judge.objects.count() == 2
    page = client.post(changelist, {**chosen, "post": "yes"}, follow=True)
    text = html.unescape(page.content.decode())
    assert "Successfully deleted 1 judge." in text and "Successfully deleted 2" not in text
    assert "Not deleted: Judge busy is scoring dataset a (metrics run" in text
    assert list(Judge.objects.values_list("name", flat=True)) == ["busy"]
    assert (
        MetricScore.objects.filter(metric="judge:busy").count() == 2
        and not MetricScore.objects.filter(metric="judge:free").exists()
    )
    assert list(LogEntry.objects.values_list("object_repr", flat=True)) == ["judge:free"]  # the refused one unlogged


def test_the_admin_bulk_delete_of_only_busy_judges_says_no_success(client, admin_user, researcher, judge):
    MetricRun.objects.create(dataset=MetricRun.objects.get().dataset, metrics=["judge:gone"], status="queued")
    client.force_login(admin_user)
    chosen = {"action": "delete_selected", "_selected_action": [judge.pk], "post": "yes"}
    text = html.unescape(client.post(reverse("admin:scoring_judge_changelist"), chosen, follow=True).content.decode())
    assert "Not deleted: Judge gone is scoring dataset toy" in text and "Successfully deleted" not in text
    assert Judge.objects.filter(pk=judge.pk).exists() and not LogEntry.objects.exists()
