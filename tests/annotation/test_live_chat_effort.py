"""The live chat effort rule end to end (issue 38, quality): the page's measures stored with each
message, the quality report's figures and verdicts per chat, the quality page, and the report's
Conversations inputs leaving the chats the rule judges out (with their ratings) only while the rule
says so. Two annotators chat with a real local stand-in bot; the figures are worked out by hand."""

import io

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from analysis.report.conversation_inputs import conversation_inputs
from annotation.models import ChatAttempt, ChatSurveySettings, Dataset, LiveChat
from annotation.quality.recompute import quality_recompute
from annotation.services.surveys import SurveyError
from tests.annotation.live_chat_helpers import ChatClient, chat_survey, chat_system
from tests.stand_in_bot import stand_in_bot

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


@pytest.fixture
def bot():
    with stand_in_bot("ok", delay=0.01) as running:
        yield running


def _chat_and_hand_in(chat_client, messages):
    for text, pasted, idle_ms in messages:
        status, body = chat_client.send(text) if pasted is None else chat_client.post(
            action="send", text=text, key=f"{text}-key", pasted_chars=str(pasted), idle_ms=str(idle_ms)
        )  # fmt: skip
        assert status == 200, body
    assert chat_client.post(action="end")[0] == 200
    live = LiveChat.objects.get(conversation__turns__text=messages[0][0])
    item = live.assignment.hit.items.get()
    fields = {f"score-{item.pk}-{a.key}": "4" for a in live.assignment.hit.survey.aspects.filter(per_turn=False)}
    assert chat_client.client.post(chat_client.task_url, fields).status_code == 302
    return live


def _measures(live):
    """The page's measures of each annotator message, by turn, as kept with its first attempt."""
    return dict(live.attempts.exclude(client_key="").values_list("user_turn", "telemetry"))


CAREFUL = [
    ("what films do you like these days?", 0, 8_000),
    ("I liked the one about the lighthouse keeper", 0, 12_000),
    ("why do you think people remember it?", 3, 30_000),
]
CARELESS = [
    ("ok", 0, 1_000),
    ("Tell me everything about the history of cinema in Europe.", 58, 2_000),  # 58 characters, all pasted
    ("yes", None, None),  # sent without measures
]


def test_the_effort_rule_leaves_out_the_careless_chat_and_its_ratings_only_while_it_is_on(
    researcher, bot, researcher_client
):
    survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)], min_turns=3, max_turns=3, per_system=2)
    careful = _chat_and_hand_in(ChatClient(Client(), survey, worker="careful"), CAREFUL)
    careless = _chat_and_hand_in(ChatClient(Client(), survey, worker="careless"), CARELESS)
    assert _measures(careful) == {0: {"pasted_chars": 0, "idle_ms": 8000}, 2: {"pasted_chars": 0, "idle_ms": 12000},
                                  4: {"pasted_chars": 3, "idle_ms": 30000}}  # fmt: skip
    assert _measures(careless) == {0: {"pasted_chars": 0, "idle_ms": 1000}, 2: {"pasted_chars": 58, "idle_ms": 2000},
                                   4: {}}  # fmt: skip
    # Off by default: both chats analysed.
    inputs = conversation_inputs(dataset=survey.dataset)
    assert set(inputs.system_of) == {careful.conversation_id, careless.conversation_id}
    # careless: 2 of 3 messages under 3 words (0.67 > 0.5); 1 of 2 measured mostly pasted (0.5, not > 0.5);
    # careful: none short, none pasted (3 of 36 characters), longest idle 30 s (not > 45 s).
    ChatSurveySettings.objects.filter(survey=survey).update(
        effort_max_short_share=0.5, effort_max_pasted_share=0.5, effort_max_idle_seconds=45
    )
    report = quality_recompute(survey=survey).data["chat_effort"]
    rows = {row["conversation_id"]: row for row in report["chats"]}
    assert rows[careful.conversation_id] | {"reasons": None} == {
        "conversation_id": careful.conversation_id, "annotator_id": careful.annotator_id, "worker": "careful",
        "messages": 3, "short": 0, "measured": 3, "pasted": 0, "longest_idle_seconds": 30.0, "excluded": False,
        "reasons": None,
    }  # fmt: skip
    assert rows[careless.conversation_id]["reasons"] == [
        {"rule": "short", "detail": "2 of 3 messages under 3 words (67%), above 0.5", "value": 2 / 3,
         "threshold": 0.5},
    ]  # fmt: skip
    assert report["n_excluded"] == 1 and report["rules"]["on"]
    inputs = conversation_inputs(dataset=survey.dataset)
    assert set(inputs.system_of) == {careful.conversation_id}
    assert {row[1] for row in inputs.whole} == {careful.conversation_id}, "its ratings go with it"
    assert inputs.exclusions["low_effort_chats"] == 1 and "effort rule" in inputs.exclusions["note"]
    # Exclusions switched off in the report: every handed-in chat counts again.
    assert set(conversation_inputs(dataset=survey.dataset, apply_exclusions=False).system_of) == set(rows)
    # A stricter paste share catches careless's pasted message too (1 of 2 > 0.4).
    ChatSurveySettings.objects.filter(survey=survey).update(effort_max_pasted_share=0.4)
    report = quality_recompute(survey=survey).data["chat_effort"]
    careless_row = next(r for r in report["chats"] if r["conversation_id"] == careless.conversation_id)
    assert [r["rule"] for r in careless_row["reasons"]] == ["short", "pasted"]
    page = researcher_client.get(reverse("annotation:quality_survey", args=[survey.pk])).content.decode()
    assert 'id="chat-effort-table"' in page and "left out: 2 of 3 messages under 3 words (67%)" in page
    assert "1 of 2 handed-in chats left out." in page


def test_bad_measures_are_refused_saying_which_and_store_nothing(researcher, bot, client):
    survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)])
    chat = ChatClient(client, survey)
    status, body = chat.post(action="send", text="hello", key="k1", pasted_chars="lots", idle_ms="10")
    assert status == 400 and body["error"] == "The message's pasted characters must be a whole number, not 'lots'."
    status, body = chat.post(action="send", text="hello", key="k2", pasted_chars="0", idle_ms="-5")
    assert status == 400 and body["error"] == "The message's idle time must be 0 or more."
    assert body["state"]["turns"] == [] and not ChatAttempt.objects.exists()


def test_effort_thresholds_out_of_range_are_refused_and_make_no_survey(researcher, bot):
    system = chat_system(researcher, bot.base_url)
    with pytest.raises(SurveyError, match=r"--effort-max-short-share must be a share between 0 and 1"):
        chat_survey(researcher, [system], name="bad", effort_max_short_share=1.5)
    with pytest.raises(SurveyError, match=r"--effort-max-idle-seconds must be more than 0 seconds"):
        chat_survey(researcher, [system], name="bad2", effort_max_idle_seconds=0)
    assert not ChatSurveySettings.objects.exists()


def test_create_survey_takes_the_effort_thresholds(researcher, bot):
    chat_system(researcher, bot.base_url, name="n1")
    Dataset.objects.create(owner=researcher, name="empty")
    call_command(
        "create_survey", "--task-type", "chat", "--dataset", "empty", "--name", "S", "--chat-systems", "n1",
        "--min-turns", "2", "--effort-max-short-share", "0.5", "--effort-max-idle-seconds", "90",
        "--provider", "local", stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    settings = ChatSurveySettings.objects.get(survey__name="S")
    assert (settings.effort_max_short_share, settings.effort_max_pasted_share, settings.effort_max_idle_seconds) == (
        0.5, None, 90.0,
    )  # fmt: skip
