"""One request at a time to an endpoint (a chat system's next turn), on clients kept between requests.

A live chat asks for one reply per annotator message, from a web or worker thread that has no event
loop of its own (or has one: a sync view under ASGI). Building the SDK's client per request cost 100
to 200 ms of CPU (its TLS context, its connection pool) and a new connection each time, more than the
whole budget RateLab gives itself per turn; so the clients live on one event loop in a thread of this
process, one per (settings, checked address), the last `KEEP_CLIENTS` kept (the oldest closed).

The rules are applied at every request all the same: the base URL's host is resolved and every
address checked (checked_address), and a client is reused only for the address that check chose:
a name that now resolves elsewhere gets a client of its own, pinned to the new, checked address.
A process forked after using this (a pre-forking server) starts its own loop: a thread does not
survive a fork.
"""

import asyncio
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from config.endpoints.addresses import HostRefused, checked_address
from config.endpoints.client import EndpointFailure, async_client, post_chat, where

KEEP_CLIENTS = 32


@dataclass(frozen=True)
class Completion:
    """One answer: its text, its token counts and how long the request took (seconds)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class _Loop:
    """An event loop running in a daemon thread, and the clients made on it (used on it only)."""

    def __init__(self):
        self.pid = os.getpid()
        self.loop = asyncio.new_event_loop()
        self.clients = OrderedDict()
        thread = threading.Thread(target=self.loop.run_forever, name="endpoint-requests", daemon=True)
        thread.start()

    async def client(self, settings, address):
        key = (settings, address)
        client = self.clients.pop(key, None) or async_client(settings, address)
        self.clients[key] = client  # the most recently used last
        while len(self.clients) > KEEP_CLIENTS:
            _, oldest = self.clients.popitem(last=False)
            await oldest.close()
        return client

    async def ask(self, settings, address, messages, headers):
        client = await self.client(settings, address)
        # The SDK's timeout bounds each read, not the request: a server sending a byte a second would
        # hold the annotator forever. The whole request (and its retries) gets a limit of its own.
        limit = (settings.timeout + settings.connect_timeout) * (settings.max_retries + 1) + 1.0
        try:
            return await asyncio.wait_for(post_chat(client, settings, messages, headers=headers), limit)
        except TimeoutError:
            raise EndpointFailure(
                f"{where(settings.base_url)} did not finish its answer within {limit:g} s",
                kind=EndpointFailure.TIMEOUT,
            ) from None


_lock = threading.Lock()
_current = []  # the process's _Loop, made on first use (a list: no `global` statement)


def _loop():
    with _lock:
        if not _current or _current[0].pid != os.getpid():
            _current[:] = [_Loop()]
        return _current[0]


def complete(settings, messages, *, noun="judge", headers=None):
    """The endpoint's answer to `messages` (one request, the client's retries aside) as a Completion,
    or EndpointFailure. The address is checked before anything is sent (kind REFUSED when refused).
    Blocks the calling thread until the answer, a failure or the settings' time limits."""
    started = time.monotonic()
    try:
        address = checked_address(settings.base_url, allow_private=settings.allow_private, noun=noun)
    except HostRefused as refused:
        raise EndpointFailure(str(refused), kind=EndpointFailure.REFUSED) from None
    loop = _loop()
    future = asyncio.run_coroutine_threadsafe(loop.ask(settings, address, messages, headers), loop.loop)
    reply, prompt_tokens, completion_tokens = future.result()
    return Completion(reply, prompt_tokens, completion_tokens, time.monotonic() - started)
