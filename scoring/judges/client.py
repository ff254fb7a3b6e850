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

Where the requests go is checked first (scoring.judges.addresses): the host is resolved once, each of
its addresses checked, and every connection made to the checked address. A failure names the base
URL and a short reason of RateLab's own (the HTTP status and its standard phrase, the kind of
connection failure), never what the server sent: the base URL is the researcher's choice, and an
internal service's error page must not reach a page. The answers stream back as they arrive
(`judge_prompts_stream`), so the caller stores each before the next: a worker killed mid-batch has
lost none it paid for.
"""

import asyncio
import http
import importlib
import queue
import re
import statistics
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from scoring.judges.addresses import HostRefused, checked_address, pinned_transport

# Local servers (vLLM without --api-key, llama.cpp, Ollama) want no key; the SDK wants a string.
NO_KEY = "no-key"


@dataclass(frozen=True)
class JudgeSettings:
    base_url: str
    model: str
    api_key: str = NO_KEY
    temperature: float = 0.0
    max_tokens: int = 16
    samples: int = 1
    concurrency: int = 8
    timeout: float = 60.0
    # A connection not made by then never will be (a host that drops packets); without a limit of its
    # own a silent host held each prompt, and each retry, for the whole request limit.
    connect_timeout: float = 10.0
    max_retries: int = 4
    unreachable_after: int = 3
    # loopback and private addresses (the operator's JUDGE_ALLOW_PRIVATE_HOSTS); link-local never
    allow_private: bool = False

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


class JudgeRequestFailed(Exception):
    """A request that still failed after the client's retries (or could not be retried)."""


class JudgeNotSent(JudgeRequestFailed):
    """A prompt not sent at all: its endpoint had already proved unreachable (nothing was charged)."""


# What httpx (and the SDK's httpx2) raise when no connection could be made: refused, a name that
# does not resolve and a failed TLS handshake are ConnectError, no connection in time ConnectTimeout.
# A connection the server opened and then dropped (ReadError, RemoteProtocolError) is not one.
_CONNECT_FAILURES = {"ConnectError", "ConnectTimeout"}


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


def _could_not_connect(error):
    return type(error.__cause__).__name__ in _CONNECT_FAILURES


def status_text(code):
    """ "HTTP 403 Forbidden": the status and its standard phrase (never the server's own reason text)."""
    try:
        return f"HTTP {code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


def _connection_reason(error):
    """A short reason for a failed connection, in RateLab's words: what the system said about a
    connection that could not be made (refused, no such name), else only the kind of failure (a
    dropped connection's message may quote what the server sent)."""
    cause = error.__cause__
    if type(cause).__name__ == "ConnectError":
        reason = str(cause)
        reason = re.sub(r"^\[Errno -?\d+\]\s*", "", reason)
        return (reason[:120] or "connection failed") if reason.isprintable() else "connection failed"
    names = {"ReadError": "the connection was dropped", "RemoteProtocolError": "the answer was not valid HTTP"}
    return names.get(type(cause).__name__, "connection failed")


def redact(message, api_key):
    """`message` without the key, nor the masked key some hosted APIs echo in a 401."""
    return re.sub(r"(API key provided:\s*)\S+", r"\1[key]", _without_key(message, api_key))


def _without_key(text, api_key):
    return text.replace(api_key, "[key]") if api_key and api_key != NO_KEY else text


def where(base_url):
    """The base URL as a failure names it: no query or fragment (nor user-info, which is refused)."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


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


def _sdk():
    """The `openai` package, imported when a judge first runs: it takes ~0.5 s and pulls in pydantic,
    which the web processes and every other task (they load this module through the metric engine)
    never need."""
    return importlib.import_module("openai")


async def _judge_prompts(settings, prompts, parse, *, address, emit, stop):
    openai = _sdk()
    host = urlsplit(settings.base_url).hostname.rstrip(".")
    client = openai.AsyncOpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key or NO_KEY,
        timeout=openai.Timeout(settings.timeout, connect=min(settings.connect_timeout, settings.timeout)),
        max_retries=settings.max_retries,
        # The SDK's own client follows redirects: a server on JUDGE_ALLOWED_HOSTS could then send
        # the workers' requests to any host (an internal one); a redirect is an HTTP error instead.
        # Connections go to the checked address (no second lookup); no proxy or .netrc from the
        # environment: a proxy would look the name up again, and .netrc would add its credentials.
        http_client=openai.DefaultAsyncHttpxClient(
            follow_redirects=False, transport=pinned_transport(host, address), trust_env=False
        ),
    )
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
    openai = _sdk()
    settings = endpoint.settings
    async with endpoint.gate:
        if endpoint.given_up:
            raise JudgeNotSent(endpoint.given_up)
        if endpoint.stop is not None and endpoint.stop.is_set():
            raise JudgeNotSent("the judging stopped")
        try:
            # The documented request body, posted with the client's own machinery (its retries,
            # backoff and Retry-After, its errors) but without `chat.completions.create`'s
            # recursive transform of every typed parameter, which cost about a millisecond of CPU a
            # request and held a 2-core machine under 200 requests/s (bench/bench_judges.py).
            completion = await client.post(
                "/chat/completions",
                cast_to=openai.types.chat.ChatCompletion,
                body={
                    "model": settings.model,
                    "messages": messages,
                    "temperature": settings.temperature,
                    "max_tokens": settings.max_tokens,
                },
            )
        except openai.APIStatusError as error:
            endpoint.reached()
            # The status and its standard phrase only: the body (in str(error)) is the server's own.
            raise JudgeRequestFailed(f"{where(settings.base_url)} answered {status_text(error.status_code)}") from None
        except openai.APITimeoutError as error:
            if _could_not_connect(error):
                endpoint.could_not_connect()
                raise JudgeRequestFailed(
                    f"cannot reach {where(settings.base_url)}: no connection within "
                    f"{min(settings.connect_timeout, settings.timeout):g} s "
                    f"({settings.max_retries} retries)"
                ) from None
            endpoint.reached()
            raise JudgeRequestFailed(
                f"{where(settings.base_url)} did not answer within {settings.timeout:g} s"
                f" ({settings.max_retries} retries)"
            ) from None
        except openai.APIConnectionError as error:
            if isinstance(error.__cause__, HostRefused):
                endpoint.could_not_connect()
                raise JudgeRequestFailed(str(error.__cause__)) from None
            if _could_not_connect(error):
                endpoint.could_not_connect()
            raise JudgeRequestFailed(f"cannot reach {where(settings.base_url)}: {_connection_reason(error)}") from None
        endpoint.reached()
    choices = completion.choices or []
    # A server (or a proxy) that repeats the request's Authorization header in its reply would have
    # the key kept in the cache, shown as an unreadable example and exported: it is cut out here.
    reply = _without_key((choices[0].message.content or "") if choices else "", settings.api_key)
    usage = completion.usage
    return reply, (usage.prompt_tokens if usage else 0), (usage.completion_tokens if usage else 0)
