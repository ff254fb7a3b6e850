"""One request to an OpenAI-compatible chat-completions endpoint, with RateLab's rules on where it goes.

Shared by the LLM judges (scoring.judges.client sends many prompts at once through `post_chat`)
and the live chat systems (config.endpoints.session's `complete`: a conversation's next turn). The
official `openai` package does the HTTP: its client retries 408, 409, 429, 5xx and timeouts with
exponential backoff and honours `Retry-After`, up to `max_retries` times.

Where the requests go is checked first (config.endpoints.addresses): the host is resolved once, each
of its addresses checked, and every connection made to the checked address; redirects are never
followed. A failure (`EndpointFailure`) has a `kind` a caller can act on (a timeout, no connection,
an HTTP status, a body that is no chat completion) and a message that names the base URL and a short
reason of RateLab's own, never what the server sent: the base URL is the researcher's choice, and an
internal service's error page must not reach a page.
"""

import http
import importlib
import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from config.endpoints.addresses import HostRefused, pinned_transport

# Local servers (vLLM without --api-key, llama.cpp, Ollama) want no key; the SDK wants a string.
NO_KEY = "no-key"


@dataclass(frozen=True)
class EndpointSettings:
    base_url: str
    model: str
    api_key: str = NO_KEY
    temperature: float = 0.0
    max_tokens: int = 16
    timeout: float = 60.0
    # A connection not made by then never will be (a host that drops packets); without a limit of its
    # own a silent host held each request, and each retry, for the whole request limit.
    connect_timeout: float = 10.0
    max_retries: int = 4
    # loopback and private addresses (the operator's JUDGE_ALLOW_PRIVATE_HOSTS); link-local never
    allow_private: bool = False

    def __repr__(self):  # the key stays out of tracebacks and logs
        return f"{type(self).__name__}(base_url={self.base_url!r}, model={self.model!r})"


class EndpointFailure(Exception):
    """A request that failed (after the client's retries); `kind` says how, the message says it in
    RateLab's words. `status` is the HTTP status for HTTP_STATUS."""

    TIMEOUT = "timeout"  # connected, but no answer within the limit
    REFUSED = "refused"  # no connection: refused, no such name, none in time, or an address the rules refuse
    DROPPED = "dropped"  # connected, then the connection was dropped or spoke no HTTP
    HTTP_STATUS = "http_status"  # an HTTP error status (a redirect too: redirects are not followed)
    BAD_BODY = "bad_body"  # a 200 whose body is no chat completion

    def __init__(self, message, *, kind=HTTP_STATUS, status=None):
        super().__init__(message)
        self.kind = kind
        self.status = status


# What httpx (and the SDK's httpx2) raise when no connection could be made: refused, a name that
# does not resolve and a failed TLS handshake are ConnectError, no connection in time ConnectTimeout.
# A connection the server opened and then dropped (ReadError, RemoteProtocolError) is not one.
_CONNECT_FAILURES = {"ConnectError", "ConnectTimeout"}


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
    return re.sub(r"(API key provided:\s*)\S+", r"\1[key]", without_key(message, api_key))


def without_key(text, api_key):
    return text.replace(api_key, "[key]") if api_key and api_key != NO_KEY else text


def where(base_url):
    """The base URL as a failure names it: no query or fragment (nor user-info, which is refused)."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


def sdk():
    """The `openai` package, imported when an endpoint is first asked: it takes ~0.5 s and pulls in
    pydantic, which the web processes and most tasks never need."""
    return importlib.import_module("openai")


def async_client(settings, address):
    """An AsyncOpenAI client for `settings` whose connections go to `address` (checked_address's)."""
    openai = sdk()
    host = urlsplit(settings.base_url).hostname.rstrip(".")
    return openai.AsyncOpenAI(
        base_url=settings.base_url,
        api_key=settings.api_key or NO_KEY,
        timeout=openai.Timeout(settings.timeout, connect=min(settings.connect_timeout, settings.timeout)),
        max_retries=settings.max_retries,
        # The SDK's own client follows redirects: a server on JUDGE_ALLOWED_HOSTS could then send
        # the server's requests to any host (an internal one); a redirect is an HTTP error instead.
        # Connections go to the checked address (no second lookup); no proxy or .netrc from the
        # environment: a proxy would look the name up again, and .netrc would add its credentials.
        http_client=openai.DefaultAsyncHttpxClient(
            follow_redirects=False, transport=pinned_transport(host, address), trust_env=False
        ),
    )


async def post_chat(client, settings, messages, *, headers=None):
    """`(reply, prompt_tokens, completion_tokens)` of one request, or EndpointFailure."""
    openai = sdk()
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
            options={"headers": headers} if headers else {},
        )
    except openai.APIStatusError as error:
        # The status and its standard phrase only: the body (in str(error)) is the server's own.
        raise EndpointFailure(
            f"{where(settings.base_url)} answered {status_text(error.status_code)}",
            kind=EndpointFailure.HTTP_STATUS,
            status=error.status_code,
        ) from None
    except openai.APITimeoutError as error:
        if _could_not_connect(error):
            raise EndpointFailure(
                f"cannot reach {where(settings.base_url)}: no connection within "
                f"{min(settings.connect_timeout, settings.timeout):g} s ({settings.max_retries} retries)",
                kind=EndpointFailure.REFUSED,
            ) from None
        raise EndpointFailure(
            f"{where(settings.base_url)} did not answer within {settings.timeout:g} s ({settings.max_retries} retries)",
            kind=EndpointFailure.TIMEOUT,
        ) from None
    except openai.APIConnectionError as error:
        if isinstance(error.__cause__, HostRefused):
            raise EndpointFailure(str(error.__cause__), kind=EndpointFailure.REFUSED) from None
        kind = EndpointFailure.REFUSED if _could_not_connect(error) else EndpointFailure.DROPPED
        raise EndpointFailure(
            f"cannot reach {where(settings.base_url)}: {_connection_reason(error)}", kind=kind
        ) from None
    except Exception as error:  # e.g. a 200 that is no JSON: its type only, never its text
        raise EndpointFailure(
            f"{where(settings.base_url)} gave an unreadable answer ({type(error).__name__})",
            kind=EndpointFailure.BAD_BODY,
        ) from None
    try:
        choices = completion.choices or []
        # A server (or a proxy) that repeats the request's Authorization header in its reply would
        # have the key stored and shown: it is cut out here.
        reply = without_key((choices[0].message.content or "") if choices else "", settings.api_key)
        usage = completion.usage
        return reply, (usage.prompt_tokens if usage else 0), (usage.completion_tokens if usage else 0)
    except Exception as error:  # a JSON body of another shape (no message, a content that is no text)
        raise EndpointFailure(
            f"{where(settings.base_url)} gave an unreadable answer ({type(error).__name__})",
            kind=EndpointFailure.BAD_BODY,
        ) from None
