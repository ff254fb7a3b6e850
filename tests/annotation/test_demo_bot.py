"""The demo bot (issue 38): a retrieval bot over the demo study that speaks the OpenAI chat-completions
protocol on 127.0.0.1, asked through the real SDK (config.endpoints) and with raw HTTP."""

import http.client
import json
import subprocess
import sys
import time

import pytest

from annotation.services.chat_systems.demo_bot import (
    FALLBACK,
    MODEL_NAME,
    DemoBotServer,
    RetrievalBot,
    pairs_from_records,
)
from config.endpoints.client import EndpointSettings
from config.endpoints.session import complete

PAIRS = [
    ("I adopted a dog from the shelter last week", "What breed is your new dog?"),
    ("We cooked a big pasta dinner tonight", "Homemade pasta is the best."),
    ("Hi, how are you?", "Fine, thanks! And you?"),
]


@pytest.fixture
def demo_bot():
    server = DemoBotServer(RetrievalBot(PAIRS)).start()
    yield server
    server.stop()


def _raw(server, method, path, body=None):
    port = server.httpd.server_address[1]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    payload = json.loads(response.read())
    connection.close()
    return response.status, payload


def test_the_nearest_line_by_word_overlap_gives_the_reply():
    bot = RetrievalBot(PAIRS)
    assert bot.answer([{"role": "user", "content": "my dog came from a shelter"}]) == "What breed is your new dog?"
    assert bot.answer([{"role": "user", "content": "pasta for dinner"}]) == "Homemade pasta is the best."
    assert bot.answer([{"role": "user", "content": "zzz qqq"}]) == FALLBACK


def test_it_answers_the_last_user_message_and_avoids_repeating_itself():
    bot = RetrievalBot([*PAIRS, ("my dog is a puppy from the shelter", "Puppies are a lot of work!")])
    first = bot.answer([{"role": "user", "content": "a dog from the shelter"}])
    second = bot.answer(
        [
            {"role": "user", "content": "a dog from the shelter"},
            {"role": "assistant", "content": first},
            {"role": "user", "content": "a dog from the shelter"},
        ]
    )
    assert {first, second} == {"What breed is your new dog?", "Puppies are a lot of work!"}


def test_the_demo_study_gives_it_lines_and_replies():
    records = [
        {
            "context": [{"speaker": "A", "text": "one"}, {"speaker": "B", "text": "two"}],
            "references": ["three"],
            "responses": [{"system": "s", "text": "other"}],
        }
    ]
    assert pairs_from_records(records) == [("one", "two"), ("two", "three")]
    assert len(RetrievalBot.from_demo(n_contexts=10).lines) >= 10


def test_it_speaks_the_protocol_to_the_openai_client(demo_bot):
    settings = EndpointSettings(base_url=demo_bot.base_url, model=MODEL_NAME, allow_private=True, max_retries=0)
    completion = complete(settings, [{"role": "user", "content": "Hi, how are you?"}])
    assert completion.text == "Fine, thanks! And you?"
    assert completion.prompt_tokens == 4 and completion.completion_tokens == 4


def test_its_answer_has_the_documented_shape(demo_bot):
    body = json.dumps({"model": "any", "messages": [{"role": "user", "content": "pasta dinner"}]})
    status, payload = _raw(demo_bot, "POST", "/v1/chat/completions", body)
    assert status == 200 and payload["object"] == "chat.completion" and payload["model"] == "any"
    assert payload["choices"][0]["message"] == {"role": "assistant", "content": "Homemade pasta is the best."}
    assert payload["choices"][0]["finish_reason"] == "stop"
    assert payload["usage"]["total_tokens"] == payload["usage"]["prompt_tokens"] + payload["usage"]["completion_tokens"]
    status, models = _raw(demo_bot, "GET", "/v1/models")
    assert status == 200 and [m["id"] for m in models["data"]] == [MODEL_NAME]


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/chat/completions", "not json", 400),
        ("/v1/chat/completions", json.dumps({"messages": []}), 400),
        ("/v1/chat/completions", json.dumps({"messages": ["hi"]}), 400),
        ("/v1/completions", json.dumps({"prompt": "hi"}), 404),
    ],
)
def test_a_request_that_is_no_chat_completion_gets_the_documented_error_shape(demo_bot, path, body, status):
    got, payload = _raw(demo_bot, "POST", path, body)
    assert got == status and payload["error"]["type"] == "invalid_request_error"


def test_the_command_serves_on_loopback_and_answers(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "manage.py", "demo_bot", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        assert "answering at http://127.0.0.1:" in line
        base_url = line.split("answering at ")[1].split("/chat/completions")[0]
        assert "chat_system_add --name demo-bot" in process.stdout.readline()
        settings = EndpointSettings(base_url=base_url, model=MODEL_NAME, allow_private=True, max_retries=0)
        started = time.monotonic()
        completion = complete(settings, [{"role": "user", "content": "I booked a trip to the Highlands"}])
        assert completion.text and time.monotonic() - started < 10
    finally:
        process.terminate()
        process.wait(timeout=10)
