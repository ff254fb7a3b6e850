"""A rating judge's page launches its judging of a dataset's conversations (whole, per turn, or
both) on a worker, shows the judging done with its requests, and refuses what it cannot judge."""

import pytest
from django.urls import reverse

from annotation.services.conversations import conversations_import
from scoring.judges.client import JudgeRequestFailed
from scoring.models import ConversationMetricScore, JudgeUsage, TurnMetricScore
from tests.annotation.conversation_files import conversation, jsonl
from tests.scoring.chat_server import Scripted
from tests.scoring.judge_helpers import make_judge
from tests.scoring.test_conversation_judges import scale_server, study  # noqa: F401

pytestmark = pytest.mark.django_db


def _launch(client, judge, dataset, level, *, follow=True):
    url = reverse("scoring:judge_dataset_conversations", args=[judge.pk])
    return client.post(url, {"dataset": dataset.pk, "level": level}, follow=follow)


def test_the_judges_page_judges_whole_conversations_and_shows_it_done(
    study,  # noqa: F811
    researcher,
    researcher_client,
    chat_server,
    django_capture_on_commit_callbacks,
):
    chat_server.answer = scale_server
    judge = make_judge(researcher, chat_server)
    page = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert 'id="judge-conversations"' in page and f'<option value="{study.pk}">whole</option>' in page
    with django_capture_on_commit_callbacks(execute=True):  # the task runs once the request commits
        response = _launch(researcher_client, judge, study, "conversation", follow=False)
    assert response.status_code == 302
    html = researcher_client.get(response["Location"]).content.decode()
    assert "Judging each whole conversation on each rated aspect of whole" in html
    assert ConversationMetricScore.objects.filter(metric="judge:local@overall").count() == 9
    assert ConversationMetricScore.objects.filter(metric="judge:local@engaging").count() == 9
    assert not TurnMetricScore.objects.exists()
    usage = JudgeUsage.objects.get(judge=judge, label="conversations of whole")
    assert usage.queued_at is None and usage.figures == {"scores": 18} and usage.requests == 18
    row = html.split("conversations of whole", 1)[1].split("</tr>", 1)[0]
    assert "done" in row


def test_both_levels_and_a_failure_kept_on_the_row_until_a_judging_succeeds(
    study,  # noqa: F811
    researcher_client,
    chat_server,
    django_capture_on_commit_callbacks,
    settings,
):
    settings.JUDGE_MAX_RETRIES = 0
    chat_server.answer = lambda body, n: Scripted(500)
    judge = make_judge(study.owner, chat_server)
    with pytest.raises(JudgeRequestFailed, match="failed"), django_capture_on_commit_callbacks(execute=True):
        _launch(researcher_client, judge, study, "both", follow=False)  # eager: the task's failure surfaces here
    usage = JudgeUsage.objects.get(judge=judge, label="conversations of whole")
    assert usage.queued_at is None and "HTTP 500" in usage.figures["error"]
    chat_server.answer = scale_server
    with django_capture_on_commit_callbacks(execute=True):
        _launch(researcher_client, judge, study, "both", follow=False)
    usage.refresh_from_db()
    assert "error" not in usage.figures and usage.figures["scores"] == 18
    assert TurnMetricScore.objects.filter(metric="judge:local").count() == 18
    assert JudgeUsage.objects.get(judge=judge, label="turns of whole").figures == {"scores": 18}


def test_another_researchers_dataset_a_pairwise_judge_and_a_made_up_level_are_refused(
    study,  # noqa: F811
    researcher,
    other_researcher,
    researcher_client,
    chat_server,
):
    judge = make_judge(researcher, chat_server)
    theirs = conversations_import(
        file=jsonl([conversation("x", "bot", ["hi", "hello"])]), name="theirs", owner=other_researcher
    )
    assert _launch(researcher_client, judge, theirs, "conversation").status_code == 404
    html = _launch(researcher_client, judge, study, "everything").content.decode()
    assert "Not judged: unknown level" in html
    pairs = make_judge(researcher, chat_server, name="pairs", template="pairwise")
    assert (
        'id="judge-conversations"'
        not in researcher_client.get(reverse("scoring:judge_detail", args=[pairs.pk])).content.decode()
    )
    refused = _launch(researcher_client, pairs, study, "turn").content.decode()
    assert "Not judged: judge &#x27;pairs&#x27; judges pairs" in refused
    assert not chat_server.requests and not ConversationMetricScore.objects.exists()
    assert not JudgeUsage.objects.filter(queued_at__isnull=False).exists()
