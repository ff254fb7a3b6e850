"""A chat system's next turn: `chat_reply`, what the live chat kind calls for each annotator message.

One request per call (no retries: the annotator is told and may try the turn again). The caller
keeps one request in flight per conversation and stores every attempt; this module returns the
reply or raises a ChatFailure whose `kind` the caller can act on and whose message is fit to show
an annotator's researcher (it never quotes what the endpoint sent, nor the key).

`idempotency_key` names one attempt of one turn (e.g. "conversation 12, turn 5, attempt 1"): it is
sent as the Idempotency-Key header (hosted APIs that honour it do not charge a repeat), and a reply
already received for it in the last ten minutes is returned again without a request (`replayed`),
so a caller that lost the answer (a worker killed after the request) asks nothing twice.
"""

from dataclasses import dataclass

from django.core.cache import cache

from annotation.services.chat_systems.registry import ChatSystemRefusal, chat_system_settings
from config.endpoints.client import EndpointFailure
from config.endpoints.session import complete

REPLAY_SECONDS = 600
SYSTEM_NOUN = "chat system"


@dataclass(frozen=True)
class ChatReply:
    text: str
    seconds: float  # how long the endpoint took (0 when replayed)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replayed: bool = False


class ChatFailure(Exception):
    """A turn the system did not answer. `kind`: one of KINDS; `status`: the HTTP status for
    "http_status"; `retryable`: whether trying the same turn again may succeed."""

    NOT_ALLOWED = "not_allowed"  # the rules refuse the system now (host, key variable) or its key is unset
    EMPTY = "empty"  # a chat completion with no text: nothing to show the annotator
    KINDS = (
        EndpointFailure.TIMEOUT,
        EndpointFailure.REFUSED,
        EndpointFailure.DROPPED,
        EndpointFailure.HTTP_STATUS,
        EndpointFailure.BAD_BODY,
        EMPTY,
        NOT_ALLOWED,
    )

    def __init__(self, message, *, kind, status=None):
        super().__init__(message)
        self.kind = kind
        self.status = status

    @property
    def message(self):
        return str(self)

    @property
    def retryable(self):
        # a 4xx other than 408/409/429 is the request's or the setup's fault: the same turn fails again
        if self.kind == self.NOT_ALLOWED:
            return False
        if self.kind == EndpointFailure.HTTP_STATUS and self.status is not None:
            return self.status >= 500 or self.status in (408, 409, 429)
        return True


def _replay_key(system, idempotency_key):
    return f"chat-reply:{system.pk}:{idempotency_key}"


def chat_reply(*, system, messages, idempotency_key):
    """The system's reply to `messages` (the conversation so far, OpenAI chat messages without the
    system prompt, which is put first here), as a ChatReply; ChatFailure when there is none."""
    replay_key = _replay_key(system, idempotency_key)
    replayed = cache.get(replay_key)
    if replayed is not None:
        return ChatReply(text=replayed, seconds=0.0, replayed=True)
    try:
        settings = chat_system_settings(system)
    except ChatSystemRefusal as refusal:
        raise ChatFailure(str(refusal), kind=ChatFailure.NOT_ALLOWED) from None
    prompt = [{"role": "system", "content": system.system_prompt}] if system.system_prompt else []
    try:
        completion = complete(
            settings,
            [*prompt, *messages],
            noun=SYSTEM_NOUN,
            headers={"Idempotency-Key": str(idempotency_key)[:200]},
        )
    except EndpointFailure as failure:
        raise ChatFailure(str(failure), kind=failure.kind, status=failure.status) from None
    text = completion.text.strip()
    if not text:
        raise ChatFailure(f"{system.name} answered with no text", kind=ChatFailure.EMPTY)
    cache.set(replay_key, text, REPLAY_SECONDS)
    return ChatReply(
        text=text,
        seconds=completion.seconds,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
    )
