"""LLM judges on whole conversations (issue 37's conversation level): each conversation asked once
per aspect with the whole-conversation prompt, through a real local chat-completions server; the
scores stored per (conversation, judge and aspect), cached, and set against the aspect's ratings
in the report, at conversation and system level."""

import hashlib
import io
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy import stats as scipy_stats

from analysis.services.build import report_build
from annotation.models import Conversation
from annotation.services.conversation_answers import conversation_ratings_import
from annotation.services.conversations import conversations_import
from scoring.models import ConversationMetricScore, JudgeCacheEntry, JudgeUsage
from tests.annotation.conversation_files import conversation, jsonl
from tests.scoring.chat_server import Scripted
from tests.scoring.judge_helpers import make_judge

pytestmark = pytest.mark.django_db
SYSTEMS = ["alpha", "beta", "gamma"]
# three systems, three conversations each: enough for system-level correlations
TEXTS = [[f"user line {i}-{t}" if t % 2 == 0 else f"bot line {i}-{t}" for t in range(4)] for i in range(9)]
# whole-conversation ratings: overall on 1-5, engaging on FED's 0-2; two workers each
OVERALL = {i: (1 + i % 5, 1 + (i * 2) % 5) for i in range(9)}
ENGAGING = {i: ((i * 7) % 3, (i + 1) % 3) for i in range(9)}


def asked_scale(prompt):
    """The scale a whole-conversation prompt asks for; 1-5 for a turn's prompt (which names none)."""
    asked = re.search(r"from (\d+) to (\d+)\.$", prompt)
    return (int(asked.group(1)), int(asked.group(2))) if asked else (1, 5)


def score_on_scale(prompt):
    """What the stand-in judge answers: a score fixed by the prompt, on the scale the prompt asks."""
    low, high = asked_scale(prompt)
    return low + int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % (high - low + 1)


def scale_server(body, nth):
    return f"Score: {score_on_scale(body['messages'][-1]['content'])}"


@pytest.fixture
def study(researcher):
    records = [conversation(f"c{i}", SYSTEMS[i % 3], texts) for i, texts in enumerate(TEXTS)]
    dataset = conversations_import(file=jsonl(records), name="whole", owner=researcher)
    lines = [
        {"conversation_id": f"c{i}", "worker": f"w{w}", "aspect": aspect, "score": scores[i][w]}
        for aspect, scores in (("overall", OVERALL), ("engaging", ENGAGING))
        for i in range(9)
        for w in (0, 1)
    ]
    lines += [{"conversation_id": "c0", "turn": 1, "worker": "w0", "aspect": "quality", "score": 4}]  # fmt: skip
    conversation_ratings_import(file=jsonl(lines), dataset=dataset, scales={"engaging": (0, 2), "overall": (1, 5)})
    return dataset


def judge(*args):
    out = io.StringIO()
    call_command("compute_conversation_metrics", "--dataset", "whole", "--judge", "local", *args, stdout=out)
    return out.getvalue()


def stored(metric):
    rows = ConversationMetricScore.objects.filter(metric=metric).values_list("conversation__external_id", "value")
    return {external[1:]: value for external, value in rows}


def test_each_conversation_is_asked_once_per_aspect_with_its_transcript_aspect_and_scale(study, chat_server,
                                                                                         researcher):  # fmt: skip
    chat_server.answer = scale_server
    make_judge(researcher, chat_server)
    out = judge("--level", "conversation")
    assert "18 scores of 9 whole conversations (judge:local, aspects overall, engaging)" in out
    assert set(ConversationMetricScore.objects.values_list("metric", flat=True)) == {
        "judge:local@overall", "judge:local@engaging"}  # fmt: skip
    bodies = [body for _t, body, _a in chat_server.requests]
    assert len(bodies) == 18
    for body in bodies:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        (i,) = {int(m) for m in re.findall(r"line (\d+)-", user)}  # one conversation per prompt
        transcript = "\n".join(f"{'user' if t % 2 == 0 else 'system'}: {text}" for t, text in enumerate(TEXTS[i]))
        assert transcript in user  # every turn, in order, with its speaker
        if "Aspect: engaging" in user:
            assert asked_scale(user) == (0, 2)
            assert "from 0 (Dull) to 2 (Very engaging)" in system
            assert "would you like to keep talking to it?" in user  # the default wording of the aspect
            assert stored("judge:local@engaging")[str(i)] == score_on_scale(user)
        else:
            assert "Aspect: overall" in user and asked_scale(user) == (1, 5)
            assert stored("judge:local@overall")[str(i)] == score_on_scale(user)
    # judged again: every answer from the cache, nothing bought twice, the same scores
    before = stored("judge:local@engaging")
    judge("--level", "conversation")
    assert len(chat_server.requests) == 18
    assert stored("judge:local@engaging") == before
    usage = JudgeUsage.objects.get(label="conversations of whole")
    assert (usage.prompts, usage.cached, usage.requests) == (36, 18, 18)


def test_the_report_sets_each_judge_aspect_against_that_aspects_ratings_only(study, chat_server, researcher):
    chat_server.answer = scale_server
    make_judge(researcher, chat_server)
    judge("--level", "conversation", "--aspect", "engaging")
    assert set(ConversationMetricScore.objects.values_list("metric", flat=True)) == {"judge:local@engaging"}
    part = report_build(dataset=study, n_boot=200)["conversations"]
    rows = [r for r in part["metrics"] if r["metric"] == "judge:local"]
    assert [r["aspect"] for r in rows] == ["engaging"]  # asked about engagement, not set against overall
    judged = stored("judge:local@engaging")
    order = [str(i) for i in range(9)]
    human = [np.mean(ENGAGING[i]) for i in range(9)]
    machine = [judged[i] for i in order]
    (row,) = rows
    assert row["n"] == 9
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(human, machine)[0])
    assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(human, machine)[0])
    assert row["kendall"] == pytest.approx(scipy_stats.kendalltau(human, machine)[0])
    assert row["pearson_p"] == pytest.approx(scipy_stats.pearsonr(human, machine)[1])
    assert row["pearson_ci_low"] <= row["pearson"] <= row["pearson_ci_high"]
    (system_row,) = [r for r in part["metrics_system"] if r["metric"] == "judge:local"]
    human_means = [np.mean([human[i] for i in range(9) if i % 3 == s]) for s in range(3)]
    machine_means = [np.mean([machine[i] for i in range(9) if i % 3 == s]) for s in range(3)]
    assert system_row["n"] == 3 and system_row["aspect"] == "engaging"
    assert system_row["pearson"] == pytest.approx(scipy_stats.pearsonr(human_means, machine_means)[0])


def test_a_failed_conversation_stores_nothing_and_the_retry_asks_only_what_is_missing(
    study, chat_server, researcher, settings
):
    def failing_on_c4(body, nth):
        user = body["messages"][-1]["content"]
        return Scripted(500, reply="internal detail") if "line 4-" in user else scale_server(body, nth)

    chat_server.answer = failing_on_c4
    settings.JUDGE_MAX_RETRIES = 0
    make_judge(researcher, chat_server)
    with pytest.raises(CommandError) as failure:
        judge("--level", "conversation", "--aspect", "overall")
    message = str(failure.value)
    assert message.startswith("judge 'local' on whole conversations: 1 failed, 8 answered, of 9 prompt(s)")
    assert "HTTP 500" in message and "internal detail" not in message  # never a foreign server's body
    assert not ConversationMetricScore.objects.exists()
    assert JudgeCacheEntry.objects.count() == 8  # the answered ones are kept: paid for once
    asked = len(chat_server.requests)
    chat_server.answer = scale_server
    assert "9 scores of 9 whole conversations" in judge("--level", "conversation", "--aspect", "overall")
    assert len(chat_server.requests) == asked + 1  # only c4 asked again
    assert len(stored("judge:local@overall")) == 9


def test_an_unreadable_or_out_of_scale_reply_is_stored_as_no_score_and_counted(study, chat_server, researcher):
    chat_server.answer = lambda body, n: "Score: 3" if "Aspect: engaging" in body["messages"][-1]["content"] else "?"
    make_judge(researcher, chat_server)
    judge("--level", "conversation", "--aspect", "engaging")
    assert set(stored("judge:local@engaging").values()) == {None}  # 3 is off FED's 0-2 scale: no guess
    usage = JudgeUsage.objects.get(label="conversations of whole")
    assert usage.unparseable == 9 and usage.unparseable_example == "Score: 3"


def test_both_levels_judge_turns_and_whole_conversations(study, chat_server, researcher):
    chat_server.answer = scale_server
    make_judge(researcher, chat_server)
    out = judge("--level", "both", "--aspect", "overall")
    assert "9 scores of 9 whole conversations" in out and "18 scores of 18 system turns (judge:local)" in out
    assert Conversation.objects.get(external_id="c0").turns.get(index=1).metric_scores.get().metric == "judge:local"


def test_a_per_turn_aspect_a_pairwise_judge_and_an_unknown_judge_are_refused_before_any_request(
    study, chat_server, researcher
):
    chat_server.answer = scale_server
    make_judge(researcher, chat_server)
    make_judge(researcher, chat_server, name="pairs", template="pairwise")
    with pytest.raises(CommandError, match="quality are rated per turn, not on whole conversations"):
        judge("--level", "conversation", "--aspect", "quality")
    with pytest.raises(CommandError, match=r"judge 'pairs' on whole conversations: .*judges pairs"):
        call_command("compute_conversation_metrics", "--dataset", "whole", "--judge", "pairs", "--level",
                     "conversation", stdout=io.StringIO())  # fmt: skip
    with pytest.raises(CommandError, match="judge 'nobody'"):
        call_command("compute_conversation_metrics", "--dataset", "whole", "--judge", "nobody", "--level",
                     "conversation", stdout=io.StringIO())  # fmt: skip
    assert not chat_server.requests and not ConversationMetricScore.objects.exists()


def test_removing_the_judge_removes_its_turn_and_whole_conversation_scores(study, chat_server, researcher):
    from scoring.models import Judge, TurnMetricScore
    from scoring.services.judges.remove import judge_delete, judge_score_count

    chat_server.answer = scale_server
    judge_model = make_judge(researcher, chat_server)
    judge("--level", "both")
    call_command("compute_conversation_metrics", "--dataset", "whole", stdout=io.StringIO())  # reference-free ones
    kept = ConversationMetricScore.objects.exclude(metric__startswith="judge:").count()
    assert judge_score_count(judge=judge_model) == 18 + 18
    assert judge_delete(judge=Judge.objects.get(pk=judge_model.pk)) == 36
    assert not ConversationMetricScore.objects.filter(metric__startswith="judge:").exists()
    assert not TurnMetricScore.objects.filter(metric="judge:local").exists()
    assert ConversationMetricScore.objects.exclude(metric__startswith="judge:").count() == kept > 0
