#!/usr/bin/env python
"""Benchmark the live chat page's round trip (issue 38): annotators chatting at once through gunicorn
(DJANGO_DEBUG=0) on PostgreSQL with a stand-in bot (tests/stand_in_bot.py) in a process of its own.

    .venv/bin/python bench/bench_chat_page.py [--annotators 50] [--turns 10] [--delay 0.2] [--think 2 6]
        [--behaviour ok|slow|failing|hanging|redirecting|empty] [--timeout 30] [--worker-class gthread]

Each annotator is its own HTTP session: the start page, Start, the task page, the chat's state, then
`--turns` messages (a think time drawn from `--think` before each) through POST <task>/chat/, each
with its own key; one message in ten is sent a second time at once with the same key (a double
click), which must store nothing. Then End conversation and the final questions (the submit).

Printed: the load average before and after, the send round trip p50/p99/max, RateLab's own time per
turn (round trip minus the bot's delay, for answered turns) p50/p99, turns lost and doubled (counted
in the database: every annotator message once, every reply once), failures by message, the longest
wait for any answer (no request may hang without an answer), and the CPU seconds gunicorn and
PostgreSQL used per turn.
"""

import argparse
import collections
import http.cookiejar
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.bench_annotators import cpu_seconds, ensure_database, server_env, server_pids  # noqa: E402
from bench.harness import percentile, wait_for  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/ratelab_livechat_bench"
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
START_RE = re.compile(r'name="start" value="([^"]+)"')
ITEM_FIELD = re.compile(r'name="(score-\d+-[\w-]+)" value="(\d+)"')


def start_bot(behaviour, delay):
    command = [sys.executable, "-m", "tests.stand_in_bot", "--behaviour", behaviour, "--delay", str(delay)]
    bot = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return bot, bot.stdout.readline().strip()


def make_survey(args, base_url, tag):
    from django.contrib.auth import get_user_model

    from annotation.kinds.chat.setup import chat_survey_create
    from annotation.models import ChatSystem, Dataset
    from annotation.services import survey_launch

    owner, _ = get_user_model().objects.get_or_create(username="chat-bench")
    system = ChatSystem.objects.create(
        owner=owner,
        name=f"bench-{tag}",
        base_url=base_url,
        model="stand-in",
        timeout_seconds=args.timeout,
        connect_timeout_seconds=2.0,
    )
    dataset = Dataset.objects.create(owner=owner, name=f"chat-bench-{tag}")
    survey = chat_survey_create(
        dataset=dataset,
        name=f"chat-bench-{tag}",
        owner=owner,
        chat_systems=[system.name],
        min_turns=1,
        max_turns=args.turns,
        conversations_per_system=args.annotators + args.warmup,
        new_annotators_per_address_hour=100_000,
    )
    return survey_launch(survey=survey)


class Annotator:
    """One annotator's browser over urllib (its own cookie jar, Secure cookies sent over local http)."""

    def __init__(self, number, args, base, survey_token, *, results, lock):
        self.number, self.args, self.base = number, args, base
        policy = http.cookiejar.DefaultCookiePolicy(secure_protocols=("https", "wss", "http"))
        jar = http.cookiejar.CookieJar(policy)
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())
        self.token = survey_token
        self.results, self.lock = results, lock
        self.rng = random.Random(number)

    def open(self, path, data=None, headers=None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with self.opener.open(request, timeout=self.args.timeout + 60) as response:
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode()

    def run(self):
        link = f"/s/{self.token}/"
        _, _, html = self.open(link)
        data = {"action": "start", "csrfmiddlewaretoken": CSRF_RE.search(html).group(1)}
        start = START_RE.search(html)
        if start:
            data["start"] = start.group(1)
        status, headers, _ = self.open(link, data)
        if status != 302:
            raise RuntimeError(f"start answered {status}")
        task = headers["Location"]
        _, _, page = self.open(task)
        csrf = CSRF_RE.search(page).group(1)
        chat = task + "chat/"
        ajax = {"X-CSRFToken": csrf}
        self.open(chat)
        for turn in range(self.args.turns):
            time.sleep(self.rng.uniform(*self.args.think))
            fields = {
                "action": "send",
                "text": f"annotator {self.number} says hello for turn {turn}",
                "key": uuid.uuid4().hex,
            }
            for attempt in range(4):
                started = time.perf_counter()
                try:
                    status, _, text = self.open(chat, fields, ajax)
                    body = json.loads(text)
                except (OSError, ValueError) as error:  # a dropped connection: sent again with the same key
                    status, body = 0, {"error": type(error).__name__}
                seconds = time.perf_counter() - started
                state = body.get("state") or {}
                answered = state.get("can_send") or state.get("can_end")
                outcome = "answered" if answered else (state.get("failure") or body.get("error") or f"HTTP {status}")
                with self.lock:
                    self.results.append((outcome, seconds, attempt > 0))
                if attempt == 0 and self.rng.random() < 0.1:  # a double click: the same key again
                    again, _, _ = self.open(chat, fields, ajax)
                    with self.lock:
                        self.results.append(("double-click", again, False))
                if answered:
                    break
                fields = {"action": "retry"}  # "Try again", as the page offers it
        self.open(chat, {"action": "end"}, ajax)
        answers = {name: "4" for name, value in ITEM_FIELD.findall(page) if value == "4"}
        answers["csrfmiddlewaretoken"] = csrf
        status, _, _ = self.open(task, answers)
        with self.lock:
            self.results.append(("submitted" if status == 302 else f"submit {status}", 0, False))


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def counts(survey):
    from django.db.models import Count

    from annotation.models import ChatAttempt, ConversationTurn, LiveChat

    chats = LiveChat.objects.filter(assignment__hit__survey=survey)
    turns = ConversationTurn.objects.filter(conversation__live_chat__in=chats)
    per_chat = collections.Counter(turns.filter(speaker="user").values_list("conversation_id", flat=True))
    replies = collections.Counter(turns.filter(speaker="system").values_list("conversation_id", flat=True))
    texts = turns.filter(speaker="user").values("conversation_id", "text").annotate(n=Count("id")).filter(n__gt=1)
    attempts = collections.Counter(ChatAttempt.objects.filter(live_chat__in=chats).values_list("status", flat=True))
    return {
        "chats": chats.count(),
        "user_turns": sum(per_chat.values()),
        "bot_turns": sum(replies.values()),
        "doubled_messages": texts.count(),
        "unanswered": sum(max(per_chat[c] - replies.get(c, 0), 0) for c in per_chat),
        "attempts": dict(attempts),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--think", type=float, nargs=2, default=(2.0, 6.0), metavar=("MIN", "MAX"))
    parser.add_argument("--behaviour", default="ok")
    parser.add_argument("--timeout", type=float, default=30.0, help="The chat system's reply timeout (s).")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=12, help="Annotators chatting once before the run.")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--worker-class", default="gthread", choices=["sync", "gthread"])
    parser.add_argument("--port", type=int, default=8131)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB))
    args = parser.parse_args()

    env = server_env(args)
    env["JUDGE_ALLOW_PRIVATE_HOSTS"] = "1"  # the stand-in bot listens on 127.0.0.1
    # Without a broker each web worker would load the metric models on a thread after boot (config/wsgi.py:
    # MiniLM, the METEOR JVM, GloVe; 15-35 s of CPU each), during the run: that was most of the "gunicorn
    # CPU per turn" this bench printed, and it competed with the chat for the CPUs. A deployment's web
    # processes (with a broker) never load them; the chat page computes no metric.
    env["RATELAB_WARM_MODELS"] = "0"
    os.environ.update(env)
    ensure_database(args.database_url)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()

    bot, bot_url = start_bot(args.behaviour, args.delay)
    tag = time.strftime("%Y%m%d%H%M%S")
    survey = make_survey(args, bot_url, tag)
    gunicorn = [
        str(Path(python).parent / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{args.port}",
        "--workers", str(args.workers), "--threads", str(args.threads), "--worker-class", args.worker_class,
        "--timeout", str(int(args.timeout + 60)), "--log-level", "warning",
    ]  # fmt: skip
    server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{args.port}"
    print(
        f"gunicorn {args.workers} {args.worker_class} workers"
        + (f" x {args.threads} threads" if args.worker_class == "gthread" else "")
        + f"; bot {args.behaviour}, delay {args.delay} s, timeout {args.timeout} s; "
        f"{args.annotators} annotators x {args.turns} turns, think {args.think[0]}-{args.think[1]} s",
        flush=True,
    )
    try:
        wait_for(f"{base}/accounts/login/", seconds=180)
        # Warm-up, not measured: each worker's first chat imports the OpenAI SDK (seconds under load).
        warm, lock = [], threading.Lock()
        turns = args.turns
        args.turns = 1
        warmers = [
            threading.Thread(target=Annotator(10_000 + n, args, base, survey.token, results=warm, lock=lock).run)
            for n in range(args.warmup)
        ]
        for t in warmers:
            t.start()
        for t in warmers:
            t.join()
        args.turns = turns
        load_before = os.getloadavg()
        results = []
        from django.db import connection

        database = connection.settings_dict["NAME"]
        gunicorn_pids, postgres_pids = server_pids(server.pid, database)
        cpu_before = {pid: cpu_seconds(pid) for pid in gunicorn_pids + postgres_pids}
        errors = []

        def work(n):
            try:
                Annotator(n, args, base, survey.token, results=results, lock=lock).run()
            except Exception as error:
                errors.append(f"annotator {n}: {error!r}")

        threads = [threading.Thread(target=work, args=(n,)) for n in range(args.annotators)]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        gunicorn_pids, postgres_pids = server_pids(server.pid, database)
        cpu = [sum(cpu_seconds(p) - cpu_before.get(p, 0.0) for p in pids) for pids in (gunicorn_pids, postgres_pids)]
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=60)
        bot.terminate()
        bot.wait(timeout=30)

    sends = [
        (o, s, retry)
        for o, s, retry in results
        if o not in ("double-click", "submitted") and not o.startswith("submit ")
    ]
    answered = [s for o, s, _ in sends if o == "answered"]
    own = [max(s - args.delay, 0.0) for s in answered]
    failures = collections.Counter(o for o, _, _ in sends if o != "answered")
    doubles = collections.Counter(s for o, s, _ in results if o == "double-click")
    submitted = sum(1 for o, _, _ in results if o == "submitted")
    stored = counts(survey)
    expected = args.annotators * args.turns + args.warmup
    ms = lambda v: f"{v * 1000:.1f} ms"  # noqa: E731
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, after {load_after[0]:.2f} "
          f"{load_after[1]:.2f} ({os.cpu_count()} CPUs); wall {elapsed:.1f} s")  # fmt: skip
    if answered:
        print(f"send round trip (answered, {len(answered)}): p50 {ms(percentile(answered, 50))}, "
              f"p99 {ms(percentile(answered, 99))}, max {ms(max(answered))}")  # fmt: skip
        print(f"RateLab's own time per turn (round trip - {args.delay:.3f} s bot): p50 {ms(percentile(own, 50))}, "
              f"p99 {ms(percentile(own, 99))}")  # fmt: skip
    all_sends = [s for _, s, _ in sends]
    print(f"longest wait for any answer: {max(all_sends):.2f} s (every send answered: {len(all_sends)} requests)")
    print(f"failures shown to annotators: {dict(failures) or 'none'}")
    print(f"double clicks (same key again): {sum(doubles.values())}, answered {dict(doubles)}")
    print(f"stored: {stored}")
    lost = expected - stored["user_turns"] if args.behaviour == "ok" else None
    print(f"turns lost: {lost if lost is not None else 'n/a (failing bot)'}; messages doubled: "
          f"{stored['doubled_messages']}; messages without a reply: {stored['unanswered']}; "
          f"submitted {submitted}")  # fmt: skip
    turns = max(stored["user_turns"] - args.warmup, 1)
    print(f"server CPU per turn: gunicorn {ms(cpu[0] / turns)}, PostgreSQL {ms(cpu[1] / turns)}")
    if errors:
        print(f"{len(errors)} annotators failed: {errors[:3]}")


if __name__ == "__main__":
    main()
