"""Send prompts to an OpenAI-compatible chat-completions endpoint, many at once.

The official `openai` package does the HTTP: its client retries 408, 409, 429, 5xx and timeouts
with exponential backoff and honours `Retry-After` (and `retry-after-ms`), up to `max_retries`
times, so a busy server slows a run down rather than failing it. Requests run on one asyncio
loop, at most `concurrency` at a time (a semaphore): a local server that answers at once is then
limited by itself, not by threads. Every sample of a prompt is a request of its own (llama.cpp's
and Ollama's servers ignore `n`), and its reply is parsed by the caller's `parse`.

An endpoint that cannot be reached at all (nothing listening, a name that does not resolve, a TLS
handshake that fails, no connection within the time limit) is given up after `unreachable_after`
requests in a row failed so, each after its retries: the prompts not yet sent are then not sent
(JudgeNotSent), rather than each retried against a refused connection for minutes. A request that
reaches the server (an answer, or an HTTP error such as a 400 for one prompt) starts the count again.

Each request is config.endpoints.client's `post_chat`, the one live chat systems use too: where it
goes is checked first (config.endpoints.addresses: the host resolved once, each of its addresses
checked, every connection made to the checked address, no redirects), and a failure names the base
URL and a short reason of RateLab's own, never what the server sent. The answers stream back as they arrive
(`judge_prompts_stream`), so the caller stores each before the next: a worker killed mid-batch has
lost none it paid for.
"""

import asyncio
import queue
import statistics
import threading
from dataclasses import dataclass, field

from config.endpoints.addresses import checked_address
from config.endpoints.client import (  # noqa: F401  (redact, status_text, where: re-exported for the judges' callers)
    NO_KEY,
    EndpointFailure,
    EndpointSettings,
    async_client,
    post_chat,
    redact,
    status_text,
    where,
)


@dataclass(frozen=True)
class JudgeSettings(EndpointSettings):
    samples: int = 1
    concurrency: int = 8
    unreachable_after: int = 3

    def __repr__(self):  # the key stays out of tracebacks and logs
        return f"JudgeSettings(base_url={self.base_url!r}, model={self.model!r}, samples={self.samples})"


@dataclass
class Verdict:
    """What a judge said about one prompt: every sample's reply and parsed value (None: unreadable)."""

    replies: list = field(default_factory=list)
    values: list = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def parsed(self):
        return [v for v in self.values if v is not None]

    @property
    def mean(self):
        """The mean of the readable samples; None when no sample could be read (never a guess)."""
        parsed = self.parsed
        return sum(parsed) / len(parsed) if parsed else None

    @property
    def spread(self):
        """Population standard deviation of the readable samples (0 for one sample)."""
        parsed = self.parsed
        return statistics.pstdev(parsed) if parsed else None

    @property
    def unparseable(self):
        return sum(1 for v in self.values if v is None)


class JudgeRequestFailed(EndpointFailure):
    """A request that still failed after the client's retries (or could not be retried)."""


class JudgeNotSent(JudgeRequestFailed):
    """A prompt not sent at all: its endpoint had already proved unreachable (nothing was charged)."""


class _Endpoint:
    """The requests to one endpoint: at most `concurrency` at a time (`gate`), and how many in a row
    could not connect; once there were `unreachable_after`, why the prompts not yet sent are not."""

    def __init__(self, settings):
        self.settings = settings
        self.gate = asyncio.Semaphore(max(1, settings.concurrency))
        self.failures_in_a_row = 0
        self.given_up = ""
        self.stop = None  # a threading.Event: the caller stopped taking answers

    def reached(self):
        self.failures_in_a_row = 0

    def could_not_connect(self):
        self.failures_in_a_row += 1
        if not self.given_up and self.failures_in_a_row >= max(1, self.settings.unreachable_after):
            self.given_up = (
                f"{where(self.settings.base_url)} could not be reached for {self.failures_in_a_row} request(s) in a row"
            )


def judge_prompts(settings, prompts, parse):
    """One Verdict per prompt (a list of chat messages), or the JudgeRequestFailed of a prompt
    whose requests failed: the caller keeps what succeeded (the cache) and then reports the error."""
    results = [None] * len(prompts)
    for batch in judge_prompts_stream(settings, prompts, parse):
        for index, result in batch:
            results[index] = result
    return results


def judge_prompts_stream(settings, prompts, parse):
    """Yield lists of `(index, Verdict or JudgeRequestFailed)` as the answers arrive, every prompt
    once; each list holds what arrived since the previous one was taken, so a caller that stores each
    list loses at most one list when killed. HostRefused before any request when the target is refused.

    The requests run on an asyncio loop in a thread of their own; the caller's thread (and its
    database connection, its transaction) does the storing. A caller that stops early (an exception)
    stops the prompts not yet sent."""
    if not prompts:
        return
    address = checked_address(settings.base_url, allow_private=settings.allow_private)
    arrived = queue.Queue()
    stop = threading.Event()
    done = object()

    def run():
        try:
            asyncio.run(_judge_prompts(settings, prompts, parse, address=address, emit=arrived.put, stop=stop))
        except BaseException as error:  # handed to the caller's thread
            arrived.put(error)
        arrived.put(done)

    thread = threading.Thread(target=run, name="judge-requests", daemon=True)
    thread.start()
    try:
        finished = False
        while not finished:
            batch = [arrived.get()]
            while not arrived.empty():
                batch.append(arrived.get())
            if batch[-1] is done:
                finished = True
                batch.pop()
            for item in batch:
                if isinstance(item, BaseException):
                    raise item
            if batch:
                yield batch
    finally:
        stop.set()
        thread.join()


async def _judge_prompts(settings, prompts, parse, *, address, emit, stop):
    client = async_client(settings, address)
    endpoint = _Endpoint(settings)
    endpoint.stop = stop

    async def answer(index, messages):
        emit((index, await _verdict(client, endpoint, messages, parse)))

    try:
        await asyncio.gather(*(answer(index, messages) for index, messages in enumerate(prompts)))
    finally:
        await client.close()


async def _verdict(client, endpoint, messages, parse):
    samples = await asyncio.gather(
        *(_ask(client, endpoint, messages) for _ in range(max(1, endpoint.settings.samples))), return_exceptions=True
    )
    failures = [s for s in samples if isinstance(s, BaseException)]
    if failures:
        failure = failures[0]
        if not isinstance(failure, JudgeRequestFailed):  # e.g. a 200 that is no chat completion
            failure = JudgeRequestFailed(
                f"{where(endpoint.settings.base_url)} gave an unreadable answer ({type(failure).__name__})"
            )
        return failure
    verdict = Verdict()
    for reply, prompt_tokens, completion_tokens in samples:
        verdict.replies.append(reply)
        verdict.values.append(parse(reply))
        verdict.prompt_tokens += prompt_tokens
        verdict.completion_tokens += completion_tokens
    return verdict


async def _ask(client, endpoint, messages):
    settings = endpoint.settings
    async with endpoint.gate:
        if endpoint.given_up:
            raise JudgeNotSent(endpoint.given_up)
        if endpoint.stop is not None and endpoint.stop.is_set():
            raise JudgeNotSent("the judging stopped")
        try:
            reply, prompt_tokens, completion_tokens = await post_chat(client, settings, messages)
        except EndpointFailure as failure:
            if failure.kind in (EndpointFailure.HTTP_STATUS, EndpointFailure.TIMEOUT):
                endpoint.reached()  # the server answered, late or with an error: it is there
            elif failure.kind == EndpointFailure.REFUSED:
                endpoint.could_not_connect()
            raise JudgeRequestFailed(str(failure), kind=failure.kind, status=failure.status) from None
        endpoint.reached()
    return reply, prompt_tokens, completion_tokens
