"""Per-turn scales in a live chat (issue 38): a 1-5 rating under each of the bot's replies, kept by
the server as given, required for every reply before the chat may end, stored as the conversation
kind's per-turn ConversationRating rows, exported and read by the report's Conversations inputs."""

import io
import json

import pytest
from django.core.cache import cache
from django.core.management import call_command

from analysis.report.conversation_inputs import conversation_inputs
from annotation.kinds.chat.setup import turn_scale_specs
from annotation.kinds.conversation.exporting import conversation_ratings_export
from annotation.models import ConversationRating, Dataset, LiveChat, Survey
from annotation.services.surveys import SurveyError
from tests.annotation.live_chat_helpers import ChatClient, chat_survey, chat_system
from tests.stand_in_bot import stand_in_bot

pytestmark = pytest.mark.django_db
QUALITY = "quality=How good is this reply?"


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


@pytest.fixture
def bot():
    with stand_in_bot("ok", delay=0.01) as running:
        yield running


def test_a_rated_chat_stores_each_replys_rating_exports_it_and_the_report_reads_it(researcher, bot, client):
    survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)], turn_scales=[QUALITY, "fun"])
    scale = survey.aspects.get(key="quality")
    assert (scale.per_turn, scale.scale_min, scale.scale_max, scale.question) == (True, 1, 5, "How good is this reply?")
    assert survey.aspects.filter(key="overall", per_turn=False).exists(), "the default questions stay"
    chat = ChatClient(client, survey)
    chat.send("hello there")
    chat.send("what do you like?")
    page = client.get(chat.task_url).content.decode()
    assert 'id="chat-scale-defs"' in page and 'data-key="quality"' in page and "How good is this reply?" in page
    # the end is refused while a reply is unrated; a rating is kept at once and may change
    status, body = chat.post(action="end")
    assert status == 409 and "Rate every reply of the chatbot" in body["error"] and "2 still unrated" in body["error"]
    for turn, quality, fun in ((1, "2", "3"), (3, "5", "4")):
        assert chat.post(action="rate", turn=str(turn), key="quality", score=quality)[0] == 200
        assert chat.post(action="rate", turn=str(turn), key="fun", score=fun)[0] == 200
    chat.post(action="rate", turn="1", key="quality", score="1")  # changed their mind
    assert chat.state()["turn_scores"] == {"1": {"quality": 1, "fun": 3}, "3": {"quality": 5, "fun": 4}}
    assert chat.post(action="rate", turn="3", key="fun", score="")[0] == 200  # taken back
    assert chat.post(action="end")[0] == 409
    chat.post(action="rate", turn="3", key="fun", score="4")
    assert chat.post(action="end")[0] == 200
    assert chat.post(action="rate", turn="3", key="fun", score="2")[0] == 409, "final once the chat has ended"
    live = LiveChat.objects.get()
    item = live.assignment.hit.items.get()
    fields = {f"score-{item.pk}-{a.key}": "4" for a in survey.aspects.filter(per_turn=False)}
    assert client.post(chat.task_url, fields).status_code == 302
    per_turn = ConversationRating.objects.filter(conversation=live.conversation, aspect__in=["quality", "fun"])
    assert sorted(per_turn.values_list("turn__index", "aspect", "score")) == [
        (1, "fun", 3), (1, "quality", 1), (3, "fun", 4), (3, "quality", 5),
    ]  # fmt: skip
    stream = io.StringIO()
    conversation_ratings_export(dataset=survey.dataset, survey=survey, stream=stream, fmt="jsonl")
    exported = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert sorted((r["turn"], r["aspect"], r["score"]) for r in exported if r["aspect"] in ("quality", "fun")) == [
        (1, "fun", 3), (1, "quality", 1), (3, "fun", 4), (3, "quality", 5),
    ]  # fmt: skip
    inputs = conversation_inputs(dataset=survey.dataset)
    turn_index = dict(live.conversation.turns.values_list("pk", "index"))
    assert sorted((turn_index[t], a, s) for _, c, t, a, s in inputs.turns if a == "quality") == [
        (1, "quality", 1), (3, "quality", 5),
    ]  # fmt: skip


def test_bad_ratings_are_refused_saying_why_and_change_nothing(researcher, bot, client):
    survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)], turn_scales=[QUALITY])
    chat = ChatClient(client, survey)
    chat.send("hello there")
    for fields, words in (
        ({"turn": "1", "key": "quality", "score": "9"}, "9 is outside the scale 1-5."),
        ({"turn": "1", "key": "quality", "score": "great"}, "'great' is not an answer to “How good is this reply?”."),
        ({"turn": "1", "key": "nope", "score": "3"}, "No such question."),
        ({"turn": "0", "key": "quality", "score": "3"}, "No such reply in this conversation."),  # the annotator's
        ({"turn": "x", "key": "quality", "score": "3"}, "No such reply in this conversation."),
    ):
        status, body = chat.post(action="rate", **fields)
        assert (status, body["error"]) == (400, words)
    assert LiveChat.objects.get().turn_scores == {}


def test_a_chat_without_per_turn_scales_ends_without_ratings(researcher, bot, client):
    survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)])
    chat = ChatClient(client, survey)
    chat.send("hello there")
    chat.send("and again")
    assert chat.post(action="end")[0] == 200


def test_per_turn_scales_by_command_and_clashing_names_refused(researcher, bot):
    chat_system(researcher, bot.base_url, name="n1")
    Dataset.objects.create(owner=researcher, name="empty")
    call_command(
        "create_survey", "--task-type", "chat", "--dataset", "empty", "--name", "S", "--chat-systems", "n1",
        "--turn-scale", QUALITY, "--provider", "local", stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    assert Survey.objects.get(name="S").aspects.filter(key="quality", per_turn=True).exists()
    with pytest.raises(SurveyError, match="named twice"):
        turn_scale_specs(["quality", "quality=Again?"])
    with pytest.raises(SurveyError, match="named twice"):
        turn_scale_specs(["overall"])
