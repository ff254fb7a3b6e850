"""The live chat kind (issue 38) against real local stand-in bots (tests.stand_in_bot): turns stored
once each, resuming, the one-in-flight rule, failures and retries, the end and the final questions,
the conversation in the dataset and the report, blind pages, and the create_survey command."""

import io
import uuid

import pytest
from django.core.cache import cache
from django.core.management import call_command

from annotation.kinds.chat import service
from annotation.models import (
    Assignment,
    ChatAttempt,
    ChatHIT,
    Conversation,
    ConversationRating,
    ConversationTurn,
    LiveChat,
    Survey,
)
from annotation.services.chat_systems.registry import ChatSystemRefusal
from tests.annotation.live_chat_helpers import ChatClient, chat_survey, chat_system
from tests.stand_in_bot import SECRET_BODY, refused_url, stand_in_bot

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True  # the stand-in bots listen on 127.0.0.1
    cache.clear()


@pytest.fixture
def ok_bot():
    with stand_in_bot("ok", delay=0.02) as bot:
        yield bot


def _final(chat_client, score="4"):
    page = chat_client.client.get(chat_client.task_url).content.decode()
    item = LiveChat.objects.get().assignment.hit.items.get().pk
    survey = LiveChat.objects.get().assignment.hit.survey
    fields = {f"score-{item}-{a.key}": score for a in survey.aspects.filter(per_turn=False)}
    return page, fields


def test_a_chat_is_laid_out_balanced_across_systems_and_blind(researcher, client, ok_bot):
    a = chat_system(researcher, ok_bot.base_url, name="secret-model-a")
    b = chat_system(researcher, ok_bot.base_url, name="secret-model-b")
    survey = chat_survey(researcher, [a, b], per_system=3)
    hits = ChatHIT.objects.filter(hit__survey=survey).order_by("hit__position")
    systems = list(hits.values_list("chat_system__name", flat=True))
    assert sorted(systems) == ["secret-model-a"] * 3 + ["secret-model-b"] * 3
    assert all(set(systems[i : i + 2]) == {"secret-model-a", "secret-model-b"} for i in (0, 2, 4))
    chat = ChatClient(client, survey)
    page = client.get(chat.task_url).content.decode()
    status, body = chat.send("hello there")
    assert status == 200
    assert [t["text"] for t in body["state"]["turns"]] == ["hello there", "You said: hello there"]
    for secret in ("secret-model", "stand-in", ok_bot.base_url):
        assert secret not in page and secret not in str(body)
    assert "<script>" not in page and 'src="/static/annotation/kinds/chat/chat.js"' in page


def test_every_turn_is_stored_once_and_a_repeated_key_stores_nothing_twice(researcher, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url)])
    chat = ChatClient(client, survey)
    key = uuid.uuid4().hex
    assert chat.send("first message", key=key)[0] == 200
    assert chat.send("first message", key=key)[0] == 200  # a double click / retried request
    turns = list(ConversationTurn.objects.order_by("index").values_list("speaker", "text"))
    assert turns == [("user", "first message"), ("system", "You said: first message")]
    assert len(ok_bot.requests) == 1
    # a reload: the same conversation, nothing lost
    assert [t["text"] for t in chat.state()["turns"]] == ["first message", "You said: first message"]


def test_a_message_while_a_reply_is_pending_is_refused_by_the_server(researcher, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url)])
    chat = ChatClient(client, survey)
    live = service.chat_for(Assignment.objects.get(status="active"))
    ConversationTurn.objects.create(conversation=live.conversation, index=0, speaker="user", text="waiting")
    ChatAttempt.objects.create(live_chat=live, user_turn=0, client_key="k0")  # pending: a reply on its way
    status, body = chat.send("another one")
    assert status == 409 and "Wait for the reply" in body["error"]
    assert body["state"]["pending"] and not body["state"]["can_send"]
    assert ConversationTurn.objects.count() == 1


@pytest.mark.parametrize(
    ("behaviour", "words"),
    [("failing", "reported an error"), ("hanging", "did not answer in time"), ("empty", "empty message"),
     ("redirecting", "reported an error")],
)  # fmt: skip
def test_a_failing_bot_is_a_plain_message_a_kept_attempt_and_a_retry(researcher, client, behaviour, words):
    with stand_in_bot(behaviour) as bot:
        system = chat_system(researcher, bot.base_url, timeout_seconds=1.0)
        survey = chat_survey(researcher, [system])
        chat = ChatClient(client, survey)
        status, body = chat.send("are you there?")
        assert status == 200
        state = body["state"]
        assert words in state["failure"] and state["unanswered"] and not state["can_send"]
        assert SECRET_BODY not in str(body) and system.name not in str(body)
        assert [t["text"] for t in state["turns"]] == ["are you there?"], "the message is kept, no reply"
        if behaviour == "redirecting":
            assert bot.target.requests == [], "a redirect is never followed"
        # the annotator tries again; the attempt is marked a retry and nothing is doubled
        status, body = chat.post(action="retry")
        attempts = list(ChatAttempt.objects.order_by("number").values_list("number", "retry", "status"))
        assert attempts == [(1, False, "failed"), (2, True, "failed")]
        assert ConversationTurn.objects.count() == 1
        assert ChatAttempt.objects.filter(message__contains=SECRET_BODY).count() == 0


def test_a_refused_connection_then_a_bot_back_up_answers_the_same_turn(researcher, client, ok_bot):
    system = chat_system(researcher, refused_url())
    survey = chat_survey(researcher, [system])
    chat = ChatClient(client, survey)
    body = chat.send("hello?")[1]
    assert "could not be reached" in body["state"]["failure"]
    system.base_url = ok_bot.base_url
    system.save()
    body = chat.post(action="retry")[1]
    assert [t["text"] for t in body["state"]["turns"]] == ["hello?", "You said: hello?"]
    assert body["state"]["can_send"] and not body["state"]["failure"]
    assert list(ChatAttempt.objects.values_list("status", "retry")) == [("failed", False), ("ok", True)]


def test_a_lost_request_counts_as_failed_after_the_timeouts(researcher, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url)])
    chat = ChatClient(client, survey)
    live = service.chat_for(Assignment.objects.get(status="active"))
    ConversationTurn.objects.create(conversation=live.conversation, index=0, speaker="user", text="lost")
    attempt = ChatAttempt.objects.create(live_chat=live, user_turn=0, client_key="k0")
    ChatAttempt.objects.filter(pk=attempt.pk).update(started_at=attempt.started_at.replace(year=2000))
    state = chat.state()
    assert not state["pending"] and state["unanswered"] and "did not answer in time" in state["failure"]
    body = chat.post(action="retry")[1]
    assert [t["text"] for t in body["state"]["turns"]] == ["lost", "You said: lost"]


def test_min_and_max_turns_flags_end_and_final_questions_make_data(researcher, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url, name="sys-x")], min_turns=2, max_turns=3)
    chat = ChatClient(client, survey)
    chat.send("one")
    status, body = chat.post(action="end")
    assert status == 409 and "at least 2 messages" in body["error"]
    chat.send("two")
    flagged_turn = body["state"]["turns"][1]["index"]
    status, body = chat.post(action="flag", turn=str(flagged_turn), key="repetitive", on="1")
    assert status == 200 and body["state"]["flags"] == {str(flagged_turn): ["repetitive"]}
    assert chat.post(action="flag", turn="0", key="repetitive", on="1")[0] == 400, "a user turn has no flags"
    chat.send("three")
    status, body = chat.send("four")
    assert status == 409 and "reached its 3 messages" in body["error"]
    # submitting before the end is refused, nothing stored
    _, fields = _final(chat)
    response = client.post(chat.task_url, fields)
    assert response.status_code == 400 and ConversationRating.objects.count() == 0
    assert chat.post(action="end")[0] == 200
    response = client.post(chat.task_url, fields)
    assert response.status_code == 302 and response["Location"].endswith("/done/")
    assert Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 1
    conversation = Conversation.objects.get()
    assert conversation.source == Conversation.Source.LIVE and conversation.system.name == "sys-x"
    whole = dict(ConversationRating.objects.filter(turn__isnull=True).values_list("aspect", "score"))
    assert whole["overall"] == 4
    flags = ConversationRating.objects.filter(turn__isnull=False, aspect="repetitive")
    assert flags.count() == 3 and flags.filter(score=1).count() == 1
    assert flags.get(score=1).turn.index == flagged_turn
    # the chat is closed now
    assert client.get(chat.url).status_code == 410


def test_the_finished_conversation_is_in_the_report_and_abandoned_ones_are_left_out(researcher, client, ok_bot):
    from analysis.report.conversation_inputs import conversation_inputs

    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url, name="sys-x")], min_turns=1)
    chat = ChatClient(client, survey)
    chat.send("hi")
    chat.post(action="end")
    _, fields = _final(chat, score="5")
    assert client.post(chat.task_url, fields).status_code == 302
    from django.test import Client

    other = ChatClient(Client(), survey, worker="w2")
    other.send("only this")  # never ended: abandoned
    inputs = conversation_inputs(dataset=survey.dataset)
    finished = LiveChat.objects.get(assignment__status="submitted").conversation_id
    assert set(inputs.system_of) == {finished}
    assert (finished, "overall", 5) in {(c, a, s) for _, c, a, s in inputs.whole}


def test_the_system_may_write_first(researcher, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url)], opening="bot")
    chat = ChatClient(client, survey)
    state = chat.state()
    assert state["unanswered"] and not state["can_send"] and state["turns"] == []
    body = chat.post(action="retry")[1]
    assert [(t["bot"], t["text"]) for t in body["state"]["turns"]] == [(True, "You said: Hello.")]
    assert body["state"]["can_send"]


def test_another_browser_cannot_read_or_drive_the_chat(researcher, client, ok_bot):
    from django.test import Client

    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url)])
    chat = ChatClient(client, survey)
    chat.send("private")
    stranger = Client()
    assert stranger.get(chat.url).status_code == 403
    assert stranger.post(chat.url, {"action": "send", "text": "x", "key": "k"}).status_code == 403


def test_create_survey_command_makes_a_live_chat_survey(researcher, ok_bot):
    chat_system(researcher, ok_bot.base_url, name="n1")
    chat_system(researcher, ok_bot.base_url, name="n2")
    from annotation.models import Dataset

    Dataset.objects.create(owner=researcher, name="empty")
    out = io.StringIO()
    call_command(
        "create_survey", "--task-type", "chat", "--dataset", "empty", "--name", "S", "--chat-systems", "n1,n2",
        "--min-turns", "3", "--max-turns", "6", "--conversations-per-system", "2", "--provider", "local", stdout=out,
        stderr=io.StringIO(),
    )  # fmt: skip
    survey = Survey.objects.get(name="S")
    assert survey.task_type == "chat" and survey.status == Survey.Status.LIVE and survey.hits.count() == 4
    assert (survey.chat_settings.min_turns, survey.chat_settings.max_turns) == (3, 6)
    assert out.getvalue().strip().endswith(f"/s/{survey.token}/")


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--chat-systems", "nope"], "no chat system named nope"), (["--chat-systems", "n1", "--min-turns", "5",
      "--max-turns", "2"], "must be at least --min-turns"), ([], "at least one chat system")],
)  # fmt: skip
def test_create_survey_refuses_bad_chat_settings_and_creates_nothing(researcher, ok_bot, args, message):
    from django.core.management.base import CommandError

    from annotation.models import Dataset

    chat_system(researcher, ok_bot.base_url, name="n1")
    Dataset.objects.create(owner=researcher, name="empty")
    with pytest.raises(CommandError, match=message):
        call_command("create_survey", "--task-type", "chat", "--dataset", "empty", "--name", "S", *args,
                     stderr=io.StringIO(), stdout=io.StringIO())  # fmt: skip
    assert not Survey.objects.filter(name="S").exists()


def test_a_chat_system_in_use_cannot_be_deleted(researcher, ok_bot):
    from annotation.services.chat_systems.registry import chat_system_delete

    system = chat_system(researcher, ok_bot.base_url)
    chat_survey(researcher, [system])
    with pytest.raises(ChatSystemRefusal, match="live chat survey"):
        chat_system_delete(system=system)


def test_the_demo_opens_a_live_chat_survey_on_the_demo_bot(researcher, client):
    from annotation.kinds.chat.demo import demo_live_chat
    from annotation.services.chat_systems.demo_bot import DemoBotServer, RetrievalBot

    bot = RetrievalBot([("do you like music", "I love jazz, especially on rainy days.")])
    server = DemoBotServer(bot, port=0).start()
    try:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        survey = demo_live_chat(username=researcher.username, bot_port=port)
        assert demo_live_chat(username=researcher.username, bot_port=port) == survey, "made once"
        assert survey.status == Survey.Status.LIVE and survey.task_type == "chat"
        chat = ChatClient(client, survey)
        body = chat.send("Do you like music?")[1]
        assert body["state"]["turns"][-1]["text"] == "I love jazz, especially on rainy days."
    finally:
        server.stop()


def test_the_researcher_reads_the_live_conversation_with_its_failed_attempts(
    researcher, researcher_client, other_researcher, client
):
    with stand_in_bot("failing") as bot:
        survey = chat_survey(researcher, [chat_system(researcher, bot.base_url, name="sys-r")])
        chat = ChatClient(client, survey)
        chat.send("anyone <b>there</b>?")
    conversation = Conversation.objects.get()
    url = f"/datasets/{survey.dataset.pk}/conversations/{conversation.pk}/"
    page = researcher_client.get(url).content.decode()
    assert "anyone &lt;b&gt;there&lt;/b&gt;?" in page and "<b>there</b>" not in page
    assert "State: <strong>in progress</strong>" in page and "sys-r" in page
    assert "http_status" in page and SECRET_BODY not in page
    other = client.__class__()
    other.force_login(other_researcher)
    assert other.get(url).status_code == 404


def test_the_researcher_pages_of_a_chat_survey_open(researcher, researcher_client, client, ok_bot):
    survey = chat_survey(researcher, [chat_system(researcher, ok_bot.base_url, name="sys-p")], min_turns=1)
    chat = ChatClient(client, survey)
    chat.send("hi")
    chat.post(action="end")
    _, fields = _final(chat)
    assert client.post(chat.task_url, fields).status_code == 302
    for path in ("", "preview/", "ratings.jsonl", "ratings.csv", "progress.json"):
        response = researcher_client.get(f"/surveys/{survey.pk}/{path}")
        assert response.status_code == 200, (path, response.status_code)
    preview = researcher_client.get(f"/surveys/{survey.pk}/preview/").content.decode()
    assert 'id="chat"' in preview and "sys-p" not in preview.split("<form", 1)[1]
    exported = researcher_client.get(f"/surveys/{survey.pk}/ratings.jsonl").content.decode()
    assert '"overall"' in exported or "overall" in exported
