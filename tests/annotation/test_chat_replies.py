"""A chat system's reply (chat_reply, what the live chat kind calls) and the "test" button, against real
local stand-in bots (tests.stand_in_bot): an answer, a 5xx, a timeout, a redirect, a refused connection,
an empty answer. A failure says why in RateLab's words and never quotes what the bot sent."""

import contextlib
import socket
import threading
import time

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation.services.chat_systems.registry import chat_system_create
from annotation.services.chat_systems.replies import ChatFailure, chat_reply
from tests.stand_in_bot import SECRET_BODY, refused_url, stand_in_bot

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True  # the stand-in bots listen on 127.0.0.1
    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_CHAT_KEY",)}
    cache.clear()


def _system(owner, base_url, **fields):
    fields = {"timeout_seconds": 2.0, "connect_timeout_seconds": 1.0, **fields}
    return chat_system_create(owner=owner, name="bot", base_url=base_url, model="stand-in", **fields)


def _hello():
    return [{"role": "user", "content": "hello there"}]


def test_the_reply_comes_back_with_the_system_prompt_sent_first(researcher):
    with stand_in_bot("ok", delay=0.05) as bot:
        system = _system(researcher, bot.base_url, system_prompt="Be kind.", temperature=0.3, max_tokens=40)
        reply = chat_reply(system=system, messages=_hello(), idempotency_key="c1-t1-a1")
        body = bot.requests[0][1]
    assert reply.text == "You said: hello there" and not reply.replayed and reply.seconds >= 0.05
    assert body["messages"] == [{"role": "system", "content": "Be kind."}, *_hello()]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("stand-in", 0.3, 40)


def test_the_same_idempotency_key_is_answered_once(researcher):
    with stand_in_bot("ok") as bot:
        system = _system(researcher, bot.base_url)
        first = chat_reply(system=system, messages=_hello(), idempotency_key="c1-t1-a1")
        again = chat_reply(system=system, messages=_hello(), idempotency_key="c1-t1-a1")
        other = chat_reply(system=system, messages=_hello(), idempotency_key="c1-t1-a2")
        assert len(bot.requests) == 2
        assert bot.idempotency_keys == ["c1-t1-a1", "c1-t1-a2"]  # sent on: hosted APIs honour it
    assert again.text == first.text and again.replayed and not other.replayed


def test_the_key_is_sent_as_a_bearer_token_only_to_its_system(researcher, monkeypatch):
    monkeypatch.setenv("ALICE_CHAT_KEY", "sk-alice-private")
    with stand_in_bot("ok") as bot:
        system = _system(researcher, bot.base_url, api_key_env="ALICE_CHAT_KEY")
        chat_reply(system=system, messages=_hello(), idempotency_key="k")
        assert bot.requests[0][2] == "Bearer sk-alice-private"


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (429, True), (400, False), (401, False)])
def test_an_http_error_is_its_status_and_phrase_never_the_body(researcher, status, retryable):
    with stand_in_bot("failing", status=status) as bot:
        system = _system(researcher, bot.base_url)
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
        assert len(bot.requests) == 1  # no retries: the annotator tries the turn again
    assert failure.value.kind == "http_status" and failure.value.status == status
    assert failure.value.retryable is retryable
    assert f"answered HTTP {status}" in failure.value.message and SECRET_BODY not in failure.value.message


def test_a_bot_slower_than_the_timeout_is_a_timeout(researcher):
    with stand_in_bot("hanging") as bot:
        system = _system(researcher, bot.base_url, timeout_seconds=1.0)
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
    assert failure.value.kind == "timeout" and failure.value.retryable
    assert "did not answer within 1 s" in failure.value.message


def test_a_redirect_is_refused_and_its_target_never_asked(researcher):
    with stand_in_bot("redirecting") as bot:
        system = _system(researcher, bot.base_url)
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
        assert bot.target.requests == []
    assert failure.value.kind == "http_status" and failure.value.status == 307
    assert SECRET_BODY not in failure.value.message


def test_a_refused_connection_is_refused(researcher):
    system = _system(researcher, refused_url())
    with pytest.raises(ChatFailure) as failure:
        chat_reply(system=system, messages=_hello(), idempotency_key="k")
    assert failure.value.kind == "refused" and "cannot reach http://127.0.0.1:" in failure.value.message


def test_an_answer_with_no_text_is_a_failure_not_an_empty_turn(researcher):
    with stand_in_bot("empty") as bot:
        system = _system(researcher, bot.base_url)
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
    assert failure.value.kind == "empty"


def test_a_system_the_rules_refuse_now_makes_no_request(researcher, settings):
    with stand_in_bot("ok") as bot:
        system = _system(researcher, bot.base_url)
        settings.JUDGE_ALLOW_PRIVATE_HOSTS = False  # the operator took the opt-in back
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
        assert bot.requests == []
    assert failure.value.kind == "not_allowed" and not failure.value.retryable
    assert "loopback address: chat systems may use such addresses only" in failure.value.message


# --- the test button ---------------------------------------------------------------------------


def _press_test(client, system, message="Hi bot!"):
    return client.post(reverse("annotation:chat_system_test", args=[system.pk]), {"message": message})


def test_the_test_button_shows_the_reply(researcher_client, researcher):
    with stand_in_bot("ok") as bot:
        page = _press_test(researcher_client, _system(researcher, bot.base_url)).content.decode()
    assert 'id="test-reply"' in page and "You said: Hi bot!" in page


def test_the_test_button_escapes_the_reply(researcher_client, researcher):
    with stand_in_bot("ok") as bot:
        page = _press_test(researcher_client, _system(researcher, bot.base_url), "<script>x</script>").content.decode()
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        ("failing", "answered HTTP 500 Internal Server Error"),
        ("hanging", "did not answer within 1 s"),
        ("redirecting", "answered HTTP 307 Temporary Redirect"),
    ],
)
def test_the_test_button_shows_the_plain_reason_and_never_the_body(researcher_client, researcher, behaviour, said):
    with stand_in_bot(behaviour) as bot:
        response = _press_test(researcher_client, _system(researcher, bot.base_url, timeout_seconds=1.0))
    page = response.content.decode()
    assert response.status_code == 200 and 'id="test-failure"' in page and said in page
    assert SECRET_BODY not in page and "hunter2" not in page and "10.0.0.7" not in page


def test_the_test_button_says_when_nothing_listens(researcher_client, researcher):
    page = _press_test(researcher_client, _system(researcher, refused_url())).content.decode()
    assert 'id="test-failure"' in page and "cannot reach http://127.0.0.1:" in page


def test_a_bot_that_dribbles_its_answer_is_cut_off_at_the_deadline(researcher):
    """Each byte within the read timeout, the whole answer never: the request's own limit ends it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def dribble():
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
        while not stop.wait(0.3):
            with contextlib.suppress(OSError):
                connection.sendall(b" ")
        connection.close()

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    system = _system(
        researcher, f"http://127.0.0.1:{listener.getsockname()[1]}/v1", timeout_seconds=1.0, connect_timeout_seconds=0.5
    )
    started = time.monotonic()
    try:
        with pytest.raises(ChatFailure) as failure:
            chat_reply(system=system, messages=_hello(), idempotency_key="k")
    finally:
        stop.set()
        listener.close()
    assert failure.value.kind == "timeout" and "did not finish its answer within 2.5 s" in failure.value.message
    assert time.monotonic() - started < 10
