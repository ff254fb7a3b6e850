#!/usr/bin/env python
"""CPU per live chat request in one process (issue 38): the message POST and the state GET through
Django's test client on PostgreSQL, a stand-in bot answering at once in a process of its own.

    .venv/bin/python bench/bench_chat_send_cpu.py --database-url postgres://postgres@127.0.0.1:5432/<fresh db>
        [--annotators 20] [--messages 8] [--rounds 3]

Sequential and single-threaded, so the figure is the request's own CPU (this process's, which holds
the view, the ORM, the endpoint client and the test client; PostgreSQL's is not in it) and survives a
loaded host better than bench_chat_page.py's round trips; run it on two trees side by side for a
ratio. Printed: the load average, queries per message and per state read, and CPU per message and
per state read for each round.
"""

import argparse
import atexit
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_annotators import ensure_database  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="A PostgreSQL database of its own (made if missing).")
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--messages", type=int, default=8, help="Messages per annotator per round.")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(
        DJANGO_DEBUG="0",
        SECRET_KEY="bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGH",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        DATABASE_URL=args.database_url,
        DB_CONN_MAX_AGE="60",
        ALLOWED_HOSTS="testserver,127.0.0.1",
        LOG_LEVEL="WARNING",
        JUDGE_ALLOW_PRIVATE_HOSTS="1",  # the stand-in bot listens on 127.0.0.1
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    os.environ.pop("CELERY_BROKER_URL", None)
    ensure_database(args.database_url)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.annotation.live_chat_helpers import chat_survey, chat_system

    call_command("collectstatic", "--noinput", verbosity=0)
    call_command("migrate", verbosity=0)
    bot = subprocess.Popen(
        [sys.executable, "-m", "tests.stand_in_bot", "--behaviour", "ok", "--delay", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    atexit.register(bot.kill)
    base_url = bot.stdout.readline().strip()
    tag = uuid.uuid4().hex[:8]
    owner, _ = get_user_model().objects.get_or_create(username=f"chat-cpu-{tag}")
    system = chat_system(owner, base_url, name=f"cpu-{tag}")
    survey = chat_survey(
        owner, [system], name=f"cpu-{tag}", min_turns=1, max_turns=args.messages * args.rounds + 5,
        per_system=args.annotators + 1, new_annotators_per_address_hour=100_000,
    )  # fmt: skip
    chats = []
    for n in range(args.annotators):
        client = Client(HTTP_HOST="127.0.0.1")
        task = client.post(f"/s/{survey.token}/", {"action": "start", "worker": f"w{n}"}, secure=True)["Location"]
        client.get(task, secure=True)
        client.get(task + "chat/", secure=True)
        # Not measured: each chat's first message (the process's first reaches the endpoint client's set-up).
        client.post(task + "chat/", {"action": "send", "text": "warm up", "key": uuid.uuid4().hex}, secure=True)
        chats.append((client, task + "chat/"))

    def send(client, url, text):
        fields = {"action": "send", "text": text, "key": uuid.uuid4().hex, "pasted_chars": "0", "idle_ms": "900"}
        response = client.post(url, fields, secure=True)
        if response.status_code != 200:
            raise SystemExit(f"bench_chat_send_cpu: FAILED, a message was answered {response.status_code}")

    client, url = chats[0]
    with CaptureQueriesContext(connection) as sent:
        send(client, url, "counted")
    with CaptureQueriesContext(connection) as read:
        client.get(url, secure=True)
    print(f"load average before {os.getloadavg()[0]:.2f} (over 1 min), {os.cpu_count()} CPUs")
    print(f"queries per message {len(sent.captured_queries)}, per state read {len(read.captured_queries)}")
    n = args.annotators * args.messages
    for number in range(1, args.rounds + 1):
        started = time.process_time()
        for _ in range(args.messages):
            for client, url in chats:
                send(client, url, f"round {number} says hello again")
        per_send = (time.process_time() - started) / n
        started = time.process_time()
        for _ in range(args.messages):
            for client, url in chats:
                client.get(url, secure=True)
        per_read = (time.process_time() - started) / n
        print(f"round {number}: CPU per message {per_send * 1000:.1f} ms, per state read {per_read * 1000:.1f} ms")
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
