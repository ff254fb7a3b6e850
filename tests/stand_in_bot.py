"""Stand-in chat systems for the live chat tests and bench: real local HTTP servers speaking the
OpenAI chat-completions protocol (tests.scoring.chat_server's, the judge tests' own), each with one
behaviour a chat system may show.

    with stand_in_bot("ok", delay=0.2) as bot: ...      # answers "You said: <last user message>" after 200 ms
    stand_in_bot("slow")          # answers after 10 s
    stand_in_bot("failing")       # 500 Internal Server Error with a body that must never be shown
    stand_in_bot("hanging")       # answers after 60 s: past any chat system's timeout in the tests
    stand_in_bot("redirecting")   # 307 to another stand-in bot, which must never be asked
    stand_in_bot("empty")         # a chat completion with no text
    refused_url()                 # a local port with nothing listening (connection refused)

From the command line, for the bench (runs until Ctrl-C, printing its base URL):

    python -m tests.stand_in_bot --behaviour ok --delay 0.2
"""

import argparse
import contextlib
import socket
import time

from tests.scoring.chat_server import ChatServer, Scripted

# What a failing or redirecting bot's body says: no page or failure message may ever quote it.
SECRET_BODY = "internal-db-password=hunter2 at 10.0.0.7"
BEHAVIOURS = ("ok", "slow", "failing", "hanging", "redirecting", "empty")
SLOW_SECONDS = 10.0
HANG_SECONDS = 60.0


def echo(body):
    return f"You said: {body['messages'][-1]['content']}"


def _answer_for(behaviour, *, delay, redirect_to, status):
    def answer(body, nth):
        if behaviour == "ok":
            return Scripted(reply=echo(body), delay=delay)
        if behaviour == "slow":
            return Scripted(reply=echo(body), delay=max(delay, SLOW_SECONDS))
        if behaviour == "failing":
            return Scripted(status=status, reply=SECRET_BODY, delay=delay)
        if behaviour == "hanging":
            return Scripted(reply=echo(body), delay=HANG_SECONDS)
        if behaviour == "redirecting":
            return Scripted(status=307, reply=SECRET_BODY, headers={"Location": redirect_to})
        if behaviour == "empty":
            return Scripted(reply="", delay=delay)
        raise ValueError(f"unknown behaviour {behaviour!r}; one of {', '.join(BEHAVIOURS)}")

    return answer


@contextlib.contextmanager
def stand_in_bot(behaviour="ok", *, delay=0.0, status=500):
    """A started stand-in bot (a ChatServer: `.base_url`, `.requests`, `.users()`), stopped on exit.
    A redirecting bot sends its requests on to a second, ordinary one (`.target`), never to be asked."""
    target = ChatServer(answer=_answer_for("ok", delay=0, redirect_to="", status=200)).start()
    bot = ChatServer(
        answer=_answer_for(behaviour, delay=delay, redirect_to=f"{target.base_url}/chat/completions", status=status)
    )
    bot.target = target
    bot.start()
    try:
        yield bot
    finally:
        bot.stop()
        target.stop()


def refused_url():
    """The base URL of a local port with nothing listening: every connection to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def main():
    parser = argparse.ArgumentParser(description="A stand-in chat system on 127.0.0.1 (for the bench).")
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="ok")
    parser.add_argument("--delay", type=float, default=0.2, help="Seconds before each answer.")
    parser.add_argument("--status", type=int, default=500, help="The failing bot's HTTP status.")
    args = parser.parse_args()
    with stand_in_bot(args.behaviour, delay=args.delay, status=args.status) as bot:
        print(bot.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
