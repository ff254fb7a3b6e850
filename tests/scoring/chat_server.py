"""A real HTTP server speaking the OpenAI chat-completions protocol, for the judge tests and bench.

POST /v1/chat/completions with {"model", "messages", "temperature", "max_tokens"} answers
{"id", "object": "chat.completion", "created", "model", "choices": [{"index": 0, "message":
{"role": "assistant", "content": ...}, "finish_reason": "stop"}], "usage": {"prompt_tokens",
"completion_tokens", "total_tokens"}}, as the documented API does. What it replies is decided by
`answer(request_body, nth_request)`, which returns the reply text, or a `Scripted` status, headers
and delay (429 with Retry-After, 500, a timeout by sleeping past the client's limit).
"""

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Scripted:
    status: int = 200
    reply: str = ""
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


class ChatServer:
    def __init__(self, answer=None):
        self.answer = answer or (lambda body, n: "Score: 3")
        self.requests = []  # (time, body, Authorization header)
        self.host_headers = []  # the Host header of each request, in order
        self.idempotency_keys = []  # the Idempotency-Key header of each request (None: not sent)
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers and the SDK's pool expect

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append((time.monotonic(), body, self.headers.get("Authorization")))
                    server.host_headers.append(self.headers.get("Host"))
                    server.idempotency_keys.append(self.headers.get("Idempotency-Key"))
                    nth = len(server.requests)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                result = server.answer(body, nth)
                if not isinstance(result, Scripted):
                    result = Scripted(reply=result)
                if result.delay:
                    time.sleep(result.delay)
                if result.status != 200:
                    # a scripted reply becomes the error's message (what an internal service might say)
                    message = result.reply or f"scripted {result.status}"
                    error = {"error": {"message": message, "type": "server_error", "code": None}}
                    return self._send(result.status, error, result.headers)
                user = body["messages"][-1]["content"]
                prompt_tokens, completion_tokens = len(user.split()), len(result.reply.split())
                return self._send(
                    200,
                    {
                        "id": f"chatcmpl-{nth}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", ""),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": result.reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    },
                )

            def _send(self, status, payload, headers=None):
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

            def log_message(self, *args):  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def users(self):
        """The last user message of every request received, in order."""
        return [body["messages"][-1]["content"] for _, body, _ in self.requests]
