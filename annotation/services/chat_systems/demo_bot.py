"""RateLab's demo bot: a retrieval bot that speaks the OpenAI chat-completions protocol on 127.0.0.1.

No model is downloaded: the bot answers with the reply that followed the most similar line in the demo
study (annotation.services.demo_data's generated conversations). A line's similarity to the annotator's last
message is the overlap of their word sets (|shared| / sqrt(|a| * |b|), words of two letters or more);
ties go to the earlier line, and the bot does not repeat a reply it gave earlier in the conversation
while another candidate is as good. Pure Python (no Django): `python manage.py demo_bot` serves it.

Protocol (the subset chat systems use): POST /v1/chat/completions with {"model", "messages": [{"role",
"content"}, ...], ...} answers a `chat.completion` object (one choice, usage in whitespace tokens);
GET /v1/models lists the one model, "ratelab-demo-bot". A body that is no such request gets a 400 in
the documented error shape.
"""

import itertools
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from annotation.services.demo_data import demo_records

MODEL_NAME = "ratelab-demo-bot"
FALLBACK = "Tell me more about that."
_WORD = re.compile(r"[a-z0-9']{2,}")


def words(text):
    return frozenset(_WORD.findall(text.lower()))


def pairs_from_records(records):
    """(line, reply) pairs of import-format records: each context turn with the turn after it, and
    the last turn with the record's reference (else its best-rated response)."""
    pairs = []
    for record in records:
        turns = [turn["text"] if isinstance(turn, dict) else str(turn) for turn in record.get("context", [])]
        pairs.extend(itertools.pairwise(turns))
        references = record.get("references") or []
        responses = sorted(record.get("responses", []), key=lambda r: -r.get("demo_quality", 0.0))
        last_reply = references[0] if references else (responses[0]["text"] if responses else "")
        if turns and last_reply:
            pairs.append((turns[-1], last_reply))
    return pairs


class RetrievalBot:
    """Answers a conversation with the reply of the stored line nearest its last user message."""

    def __init__(self, pairs):
        self.lines = [(words(line), reply) for line, reply in pairs if line and reply]

    @classmethod
    def from_demo(cls, *, seed=0, n_contexts=60):
        return cls(pairs_from_records(demo_records(seed=seed, n_contexts=n_contexts)))

    def answer(self, messages):
        user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        said = {m.get("content") for m in messages if m.get("role") == "assistant"}
        asked = words(user if isinstance(user, str) else "")
        best, best_score = FALLBACK, 0.0
        for line, reply in self.lines:
            if not line or not asked:
                continue
            score = len(line & asked) / math.sqrt(len(line) * len(asked))
            if reply in said:
                score *= 0.5  # another reply as near is better than saying the same thing twice
            if score > best_score:
                best, best_score = reply, score
        return best


def completion_body(*, reply, model, prompt_words, number):
    completion_words = len(reply.split())
    return {
        "id": f"chatcmpl-demo-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": completion_words,
            "total_tokens": prompt_words + completion_words,
        },
    }


def _request_problem(body):
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return "the body must be a JSON object with a non-empty 'messages' list"
    for message in body["messages"]:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return "each message must be an object with a 'role' and a 'content'"
    return ""


class DemoBotServer:
    """The bot on 127.0.0.1:`port` (0: any free port), in a thread of its own or in the foreground."""

    def __init__(self, bot, *, port=0):
        self.bot = bot
        self.answered = 0
        self.lock = threading.Lock()
        handler = _handler_for(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.thread = None

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="demo-bot", daemon=True)
        self.thread.start()
        return self

    def serve_forever(self):
        self.httpd.serve_forever()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler_for(server):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the OpenAI SDK's connection pool expects

        def do_GET(self):
            if self.path.rstrip("/") in ("/v1/models", "/models"):
                model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "ratelab"}
                return self._send(200, {"object": "list", "data": [model]})
            return self._error(404, "not found: POST /v1/chat/completions")

        def do_POST(self):
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                return self._error(404, "not found: POST /v1/chat/completions")
            try:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
            except ValueError:
                return self._error(400, "the body is not JSON")
            problem = _request_problem(body)
            if problem:
                return self._error(400, problem)
            reply = server.bot.answer(body["messages"])
            with server.lock:
                server.answered += 1
                number = server.answered
            prompt_words = sum(len(str(m.get("content") or "").split()) for m in body["messages"])
            model = body.get("model") if isinstance(body.get("model"), str) else MODEL_NAME
            return self._send(200, completion_body(reply=reply, model=model, prompt_words=prompt_words, number=number))

        def _error(self, status, message):
            return self._send(status, {"error": {"message": message, "type": "invalid_request_error", "code": None}})

        def _send(self, status, payload):
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass

        def log_message(self, *args):  # quiet: the command prints one line per request itself if asked
            pass

    return Handler
