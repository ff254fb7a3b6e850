"""Benchmark `chat_reply` (a chat system's next turn) against a stand-in bot in a process of its own.

    python bench/bench_chat_reply.py [--annotators 50] [--turns 10] [--delay 0.2] [--think 2 6]
        [--behaviour ok|slow|failing|hanging|redirecting|empty] [--timeout 30]

N annotator threads each send `--turns` messages, waiting a think time drawn from `--think` between
them, to a stand-in bot (tests/stand_in_bot.py) that answers after `--delay` seconds. Printed: turns
answered and failed (by kind), RateLab's own time per turn (the call's wall time minus the bot's
delay) p50 / p99 / max, and this process's CPU seconds per turn. This is the endpoint half of the
live chat bench of issue 38 (the page round trip comes with the chat kind); no database is used.
"""

import argparse
import collections
import contextlib
import os
import random
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ["JUDGE_ALLOW_PRIVATE_HOSTS"] = "1"  # the stand-in bot listens on 127.0.0.1

import django  # noqa: E402  (after the path and settings set-up above)

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402

from annotation.models import ChatSystem  # noqa: E402
from annotation.services.chat_systems.replies import ChatFailure, chat_reply  # noqa: E402
from bench.harness import percentile  # noqa: E402


def start_bot(behaviour, delay):
    command = [sys.executable, "-m", "tests.stand_in_bot", "--behaviour", behaviour, "--delay", str(delay)]
    bot = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return bot, bot.stdout.readline().strip()


def annotator(number, args, system, results, lock):
    rng = random.Random(number)
    history = []
    for turn in range(args.turns):
        time.sleep(rng.uniform(*args.think))
        history.append({"role": "user", "content": f"annotator {number} says hello for turn {turn}"})
        started = time.perf_counter()
        try:
            reply = chat_reply(system=system, messages=history, idempotency_key=f"bench-{number}-{turn}")
            history.append({"role": "assistant", "content": reply.text})
            outcome = "answered"
        except ChatFailure as failure:
            history.pop()
            outcome = failure.kind
        with lock:
            results.append((outcome, time.perf_counter() - started))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.2, help="The bot's seconds before each answer.")
    parser.add_argument("--think", type=float, nargs=2, default=(2.0, 6.0), metavar=("MIN", "MAX"))
    parser.add_argument("--behaviour", default="ok")
    parser.add_argument("--timeout", type=float, default=30.0, help="The chat system's reply timeout.")
    args = parser.parse_args()
    bot, base_url = start_bot(args.behaviour, args.delay)
    try:
        owner = get_user_model()(username="bench")  # never saved: no database is used
        system = ChatSystem(
            owner=owner, name="bench", base_url=base_url, model="stand-in", timeout_seconds=args.timeout
        )
        # the first turn of a process imports the SDK and opens the client (seconds on a busy machine):
        # reported on its own, not in the percentiles
        warm_started = time.perf_counter()
        with contextlib.suppress(ChatFailure):  # a failing bot's first turn fails too: still warm
            chat_reply(system=system, messages=[{"role": "user", "content": "warm up"}], idempotency_key="bench-warm")
        print(f"first turn of the process (SDK import, client): {(time.perf_counter() - warm_started) * 1000:.0f} ms")
        results, lock = [], threading.Lock()
        threads = [
            threading.Thread(target=annotator, args=(n, args, system, results, lock)) for n in range(args.annotators)
        ]
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - started
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        bot.terminate()
        bot.wait(timeout=10)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    kinds = collections.Counter(outcome for outcome, _ in results)
    overhead_ms = [(wall - args.delay) * 1000 for outcome, wall in results if outcome == "answered"]
    wall_ms = [wall * 1000 for _, wall in results]
    print(f"{args.annotators} annotators x {args.turns} turns, bot '{args.behaviour}' after {args.delay:g} s: "
          f"{len(results)} turns in {seconds:.1f} s; {dict(kinds)}")  # fmt: skip
    if overhead_ms:
        print(f"RateLab's time per answered turn (wall - bot delay): p50 {percentile(overhead_ms, 50):.1f} ms, "
              f"p99 {percentile(overhead_ms, 99):.1f} ms, max {max(overhead_ms):.1f} ms")  # fmt: skip
    print(f"wall per turn, all outcomes: p50 {percentile(wall_ms, 50):.1f} ms, p99 {percentile(wall_ms, 99):.1f} ms, "
          f"max {max(wall_ms, default=0):.1f} ms; CPU {cpu / max(1, len(results)) * 1000:.2f} ms per turn")  # fmt: skip
    lost = args.annotators * args.turns - len(results)
    print(f"turns lost: {lost}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
