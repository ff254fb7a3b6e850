"""LLM judges on conversation turns (issue 37's turn level): each system turn judged as the next
turn of its conversation so far, through a real local chat-completions server, stored as a turn
metric and correlated with per-turn ratings in the report."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy import stats as scipy_stats

from analysis.services.build import report_build
from annotation.models import ConversationTurn
from annotation.services.conversation_answers import conversation_ratings_import
from annotation.services.conversations import conversations_import
from scoring.models import TurnMetricScore
from tests.annotation.conversation_files import conversation, jsonl
from tests.scoring.judge_helpers import make_judge, score_for, scoring_server

pytestmark = pytest.mark.django_db
TEXTS = [["hi", "hello, how are you?", "fine, and you?", "great thanks", "bye", "bye bye"],
         ["what is new?", "i bought a bike", "nice, what colour?", "it is red", "cool", "yes it is"],
         ["hello", "hey", "any plans?", "a trip to the sea", "when?", "next week"]]  # fmt: skip


@pytest.fixture
def study(researcher):
    records = [conversation(f"c{i}", f"bot{i % 2}", texts) for i, texts in enumerate(TEXTS)]
    dataset = conversations_import(file=jsonl(records), name="judged", owner=researcher)
    lines = [{"conversation_id": f"c{i}", "turn": t, "worker": "w1", "aspect": "quality", "score": 1 + (i + t) % 5}
             for i in range(3) for t in (1, 3, 5)]  # fmt: skip
    conversation_ratings_import(file=jsonl(lines), dataset=dataset, scales={"quality": (1, 5)})
    return dataset


def test_every_system_turn_is_judged_with_the_conversation_so_far(study, chat_server, researcher):
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server)
    out = io.StringIO()
    call_command("compute_conversation_metrics", "--dataset", "judged", "--judge", "local", stdout=out)
    assert "9 scores of 9 system turns (judge:local)" in out.getvalue()
    assert not TurnMetricScore.objects.exclude(metric="judge:local").exists()  # only the judge was asked
    prompts = [body["messages"][-1]["content"] for _t, body, _a in chat_server.requests]
    assert len(prompts) == 9
    for score in TurnMetricScore.objects.select_related("turn__conversation"):
        turn = score.turn
        texts = TEXTS[int(turn.conversation.external_id[1:])]
        # the prompt that holds this turn's text after every earlier turn of its conversation
        [prompt] = [p for p in prompts if all(t in p for t in texts[: turn.index + 1]) and
                    not any(t in p for t in texts[turn.index + 1 :] if t not in texts[: turn.index + 1])]  # fmt: skip
        assert score.value == score_for(prompt)
        assert turn.speaker == "system"
    # judged again: every answer from the judge's cache, nothing asked
    call_command("compute_conversation_metrics", "--dataset", "judged", "--judge", "local", stdout=io.StringIO())
    assert len(chat_server.requests) == 9
    part = report_build(dataset=study)["conversations"]
    row = next(r for r in part["turn_metrics"] if r["metric"] == "judge:local")
    human = dict(
        ConversationTurn.objects.filter(conversation__dataset=study, ratings__isnull=False).values_list(
            "pk", "ratings__score"
        )
    )
    judged = dict(TurnMetricScore.objects.values_list("turn_id", "value"))
    turns = sorted(human)
    assert row["n"] == 9
    assert row["pearson"] == pytest.approx(
        scipy_stats.pearsonr([human[t] for t in turns], [judged[t] for t in turns])[0]
    )


def test_an_unknown_judge_is_named_and_nothing_is_stored(study):
    with pytest.raises(CommandError, match="judge 'nobody'"):
        call_command("compute_conversation_metrics", "--dataset", "judged", "--judge", "nobody", stdout=io.StringIO())
    assert not TurnMetricScore.objects.exists()
