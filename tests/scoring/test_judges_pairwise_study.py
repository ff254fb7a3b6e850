"""LLM judges on a pairwise study: a dataset's human-judged pairs judged in both orders, from the
command line and the judge's page, against the real local chat-completions server; the report's
pairwise section shows each judge's agreement, position bias and self-consistency."""

import io
import json
import threading
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from annotation.kinds.pairwise.imports import pairwise_import
from scoring.judges import prompts
from scoring.models import JudgeCacheEntry, JudgeUsage
from scoring.services.judges.pairwise import dataset_pair_items, judge_dataset_pairs
from scoring.services.judges.registry import JudgeRefusal
from tests.factories import load_dataset_records
from tests.scoring.chat_server import Scripted
from tests.scoring.judge_helpers import make_judge

pytestmark = pytest.mark.django_db
N_CONTEXTS = 6
RECORDS = [
    {
        "context_id": f"c{i}",
        "context": [f"hello {i}", {"speaker": "B", "text": f"what now {i}?"}],
        "references": [f"reference {i}"],
        "responses": [{"system": "good", "text": f"good reply {i}"}, {"system": "bad", "text": f"bad reply {i}"}],
    }
    for i in range(N_CONTEXTS)
]


def _lines():
    """The humans prefer "good" in every pair (shown first in even contexts, second in odd ones),
    plus one tie by a second worker."""
    for i in range(N_CONTEXTS):
        first, second = ("good", "bad") if i % 2 == 0 else ("bad", "good")
        winner = "a" if first == "good" else "b"
        yield {"context_id": f"c{i}", "system_a": first, "system_b": second, "worker": "w1", "winner": winner}
    yield {"context_id": "c0", "system_a": "good", "system_b": "bad", "worker": "w2", "winner": "tie"}


@pytest.fixture
def study(researcher):
    dataset = load_dataset_records(records=RECORDS, name="ab", owner=researcher)
    file = "".join(json.dumps(line) + "\n" for line in _lines()).encode()
    pairwise_import(file=file, dataset=dataset, fmt="jsonl", survey_name="ab-study")
    return dataset


def _shown_first(body):
    user = body["messages"][-1]["content"]
    return user.split("Response A:")[1].split("Response B:")[0]


def always_first(body, nth):
    return "Winner: A"


def picks_the_good_reply(body, nth):
    return "Winner: A" if "good reply" in _shown_first(body) else "Winner: B"


def _report(**options):
    out = io.StringIO()
    call_command("report", dataset="ab", bootstrap=50, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def _judges_in_report():
    return {row["judge"]: row for row in json.loads(_report(format="json"))["pairwise"]["judges"]}


def test_a_judge_that_always_picks_the_first_position_shows_full_position_bias_and_no_consistency(
    study, researcher, chat_server, capsys
):
    chat_server.answer = always_first
    make_judge(researcher, chat_server, name="firsty", template=prompts.PAIRWISE)
    call_command("judge_pairs", "--judge", "firsty", "--dataset", "ab")
    out = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    # 7 human judgements, 6 distinct pairs: the tie repeats c0's pair, whose prompts are asked once
    assert len(chat_server.requests) == 2 * N_CONTEXTS
    assert out["position_bias"] == "1.0" and out["self_consistency"] == "0.0"
    assert (out["n_pairs"], out["n_judgements"]) == ("6", "7")
    row = _judges_in_report()["firsty"]
    assert row["position_bias"] == 1.0 and row["self_consistency"] == 0.0 and row["agreement"] == 0.0
    assert row["n_pairs"] == N_CONTEXTS and row["n_with_human_winner"] == N_CONTEXTS


def test_a_judge_that_picks_the_human_winner_in_both_orders_agrees_fully_and_the_second_run_asks_nothing(
    study, researcher, chat_server, capsys
):
    chat_server.answer = picks_the_good_reply
    make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    call_command("judge_pairs", "--judge", "oracle", "--dataset", "ab")
    assert len(chat_server.requests) == 2 * N_CONTEXTS
    call_command("judge_pairs", "--judge", "oracle", "--dataset", "ab")
    assert len(chat_server.requests) == 2 * N_CONTEXTS  # all from the cache
    usage = JudgeUsage.objects.get(label="pairs of ab")
    # 14 judgements of 6 distinct pairs (12 distinct prompts): a prompt asked twice is counted once,
    # so the row adds up: prompts = from the cache (the second judging's 12) + answered by requests (12),
    # and "from cache" never exceeds what the cache holds (F04 read "From cache 480" with an empty cache)
    assert (usage.prompts, usage.cached, usage.requests) == (24, 12, 12)
    assert usage.cached <= JudgeCacheEntry.objects.filter(judge__name="oracle").count() == 12
    row = _judges_in_report()["oracle"]
    assert row["agreement"] == 1.0 and row["self_consistency"] == 1.0 and row["position_bias"] == 0.5
    assert len(chat_server.requests) == 2 * N_CONTEXTS  # the report reads the cache only


def test_the_csv_and_latex_exports_carry_the_judges_table(study, researcher, chat_server):
    chat_server.answer = picks_the_good_reply
    make_judge(researcher, chat_server, name="=oracle", template=prompts.PAIRWISE)
    call_command("judge_pairs", "--judge", "=oracle", "--dataset", "ab")
    lines = _report(format="csv", table="pairwise_judges").splitlines()
    assert lines[0] == "judge,agreement,n_pairs,position_bias,self_consistency,n_with_human_winner,unreadable_verdicts"
    assert lines[1] == "'=oracle,1.0,6,0.5,1.0,6,0"  # a formula-like judge name is neutralised
    latex = _report(format="latex")
    assert "tab:pairwise-judges" in latex and "=oracle & 1.000 & 6 & 0.500 & 1.000" in latex


def test_the_command_refuses_a_rating_judge_and_a_dataset_without_pairs(study, researcher, chat_server):
    make_judge(researcher, chat_server, name="rater")
    with pytest.raises(CommandError, match="rates single responses"):
        call_command("judge_pairs", "--judge", "rater", "--dataset", "ab")
    make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    load_dataset_records(records=RECORDS, name="empty", owner=researcher)
    with pytest.raises(CommandError, match="'empty' has no accepted pairwise judgements"):
        call_command("judge_pairs", "--judge", "pairs", "--dataset", "empty")
    with pytest.raises(CommandError, match="one of the arguments --pairs --dataset is required"):
        call_command("judge_pairs", "--judge", "pairs")
    assert not chat_server.requests and not JudgeCacheEntry.objects.exists()


@pytest.fixture
def quick_reports(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path


@pytest.mark.usefixtures("quick_reports")
def test_the_judge_page_button_judges_the_pairs_through_the_task_and_the_report_shows_the_judge(
    study, researcher, researcher_client, chat_server, django_capture_on_commit_callbacks
):
    chat_server.answer = picks_the_good_reply
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    page = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert 'id="judge-pairs"' in page and f'<option value="{study.pk}">ab</option>' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("scoring:judge_dataset_pairs", args=[judge.pk]), {"dataset": study.pk}
        )
    assert response.status_code == 302 and len(chat_server.requests) == 2 * N_CONTEXTS
    url = reverse("analysis:dataset_report", args=[study.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    html = researcher_client.get(url).content.decode()
    assert "LLM judges against the pairwise judgements" in html
    assert '<th scope="row">oracle</th><td class="num">1.000</td><td class="num">6</td>' in html


def test_a_judging_of_pairs_queued_from_the_page_holds_the_judge_until_it_has_ended(
    study, researcher, researcher_client, chat_server
):
    chat_server.answer = picks_the_good_reply
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    # queued: the task waits in the broker (the commit that would send it never comes in this test)
    researcher_client.post(reverse("scoring:judge_dataset_pairs", args=[judge.pk]), {"dataset": study.pk})
    detail = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert "queued or running since" in detail
    remove = reverse("scoring:judge_remove", args=[judge.pk])
    refused = researcher_client.post(remove)
    assert (
        refused.status_code == 409 and "has a judging of the pairs of ab queued or running" in refused.content.decode()
    )
    assert judge in type(judge).objects.all() and not chat_server.requests
    judge_dataset_pairs(judge=judge, dataset=study)  # what the task does when a worker takes it
    assert JudgeUsage.objects.get(judge=judge).queued_at is None
    assert researcher_client.post(remove).status_code == 302
    assert not type(judge).objects.filter(pk=judge.pk).exists()


def test_a_judging_of_pairs_that_fails_no_longer_holds_the_judge(study, researcher, researcher_client, chat_server):
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE, api_key_env="GONE_KEY")
    JudgeUsage.objects.create(judge=judge, label="pairs of ab", queued_at=timezone.now())
    with pytest.raises(JudgeRefusal):  # the key's variable is unset where the worker runs
        judge_dataset_pairs(judge=judge, dataset=study)
    assert JudgeUsage.objects.get(judge=judge).queued_at is None
    assert researcher_client.post(reverse("scoring:judge_remove", args=[judge.pk])).status_code == 302


def test_a_queued_mark_a_lost_message_left_a_day_ago_no_longer_holds_the_judge(
    study, researcher, researcher_client, chat_server
):
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    JudgeUsage.objects.create(judge=judge, label="pairs of ab", queued_at=timezone.now() - timedelta(days=1, minutes=1))
    assert researcher_client.post(reverse("scoring:judge_remove", args=[judge.pk])).status_code == 302


def test_the_button_refuses_another_researchers_judge_or_dataset_and_a_rating_judge(
    study, researcher, other_researcher, client, chat_server
):
    judge = make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    url = reverse("scoring:judge_dataset_pairs", args=[judge.pk])
    client.force_login(other_researcher)
    assert client.post(url, {"dataset": study.pk}).status_code == 404
    theirs = make_judge(other_researcher, chat_server, name="theirs", template=prompts.PAIRWISE)
    theirs_url = reverse("scoring:judge_dataset_pairs", args=[theirs.pk])
    assert client.post(theirs_url, {"dataset": study.pk}).status_code == 404  # not their dataset
    assert client.post(theirs_url, {"dataset": "abc"}).status_code == 404
    client.force_login(researcher)
    rater = make_judge(researcher, chat_server, name="rater")
    response = client.post(reverse("scoring:judge_dataset_pairs", args=[rater.pk]), {"dataset": study.pk}, follow=True)
    assert "Not judged: judge &#x27;rater&#x27; rates single responses" in response.content.decode()
    assert not chat_server.requests and not JudgeCacheEntry.objects.exists()


def test_the_report_says_how_to_judge_when_no_judge_has_judged_the_pairs(study):
    assert json.loads(_report(format="json"))["pairwise"]["judges"] == []


@pytest.mark.django_db(transaction=True)  # the threads' connections read what the test committed
def test_two_judgings_of_the_same_pairs_at_once_ask_each_prompt_once(study, researcher, chat_server):
    # The button pressed in two tabs: two tasks judge the same pairs at the same moment.
    chat_server.answer = lambda body, nth: Scripted(reply=picks_the_good_reply(body, nth), delay=0.05)
    judge = make_judge(researcher, chat_server, name="twice", template=prompts.PAIRWISE)
    dataset_pair_items(study)  # brings the quality report up to date first (SQLite's shared cache locks tables)
    results, start = [], threading.Barrier(2)

    def judging():
        try:
            start.wait()
            results.append(judge_dataset_pairs(judge=judge, dataset=study))
        finally:
            connection.close()

    threads = [threading.Thread(target=judging) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 6 distinct pairs, each asked in both orders, once: the second judging read the first's answers
    assert len(chat_server.requests) == 12 and JudgeCacheEntry.objects.count() == 12
    assert len(results) == 2 and results[0] == results[1] and results[0]["agreement_with_humans"] == 1.0
