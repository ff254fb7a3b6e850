#!/usr/bin/env python
"""Profile one annotator's conversation HIT in-process: CPU time, SQL queries and the hottest
functions of Start (the claim POST, which answers with the task page), the HIT page GET (a reload
at the task's own address) and the submit POST.

Where `bench_annotators.py --task conversation` measures latency under load on gunicorn, this says
where one request's time goes, which is what to cut. Same survey shape (`--contexts-per-hit`
conversations of `--turns` turns, FED's aspects and ParlAI's flags, a gold conversation), same
settings as the bench's server (DJANGO_DEBUG=0), on PostgreSQL.

    .venv/bin/python bench/profile_conversation_page.py --database-url postgres://.../ratelab_x [--rounds 10]
"""

import argparse
import cProfile
import io
import os
import pstats
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FORM = "application/x-www-form-urlencoded"
ACTION_RE = re.compile(r'<form method="post" action="(/a/[^"]+/)"')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--rounds", type=int, default=10, help="HITs taken and submitted (one annotator each).")
    parser.add_argument("--contexts-per-hit", type=int, default=6)
    parser.add_argument("--turns", type=int, default=34)
    parser.add_argument("--profile", action="store_true", help="Print the top functions of each step.")
    parser.add_argument("--queries", action="store_true", help="Print each step's SQL statements (the last round's).")
    args = parser.parse_args()
    bench_args = SimpleNamespace(
        database_url=args.database_url, hits=1, assignments=1, systems=4, checks=None, task="conversation",
        contexts_per_hit=args.contexts_per_hit, turns=args.turns,
    )  # fmt: skip
    from bench.bench_annotators import ensure_database, server_env

    ensure_database(args.database_url)
    os.environ.update(server_env(bench_args))
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1"
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from bench.bench_annotators import make_survey
    from tests.annotation.live_annotator import CSRF_RE

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # DEBUG=0 serves hashed names
    survey = make_survey(args.rounds, bench_args, f"profile-{int(time.time())}")
    steps = {"start": [], "page": [], "submit": []}
    profiles = {name: cProfile.Profile() for name in steps}
    sizes = []
    statements = {}

    def measured(name, call):
        with CaptureQueriesContext(connection) as queries:
            cpu, wall = time.process_time(), time.perf_counter()
            warm = len(steps[name]) > 0  # the first of each warms caches (URL tables, templates): not profiled
            if warm:
                profiles[name].enable()
            response = call()
            if warm:
                profiles[name].disable()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        steps[name].append((cpu, wall, len(queries)))
        statements[name] = [query["sql"] for query in queries.captured_queries]
        return response

    link = f"/s/{survey.token}/"
    for round_ in range(args.rounds):
        client = Client(enforce_csrf_checks=False)
        client.get(link)
        start = {"action": "start", "worker": f"{survey.name}-{round_}"}
        # Form-encoded, as a browser's form and the benchmark's client post (the test client's default,
        # multipart, costs the server more to parse).
        started = measured("start", lambda c=client, s=start: c.post(link, urlencode(s), content_type=FORM))
        assert started.status_code == 200, started.status_code  # Start answers with the task page
        task = ACTION_RE.search(started.content.decode()).group(1)
        page = measured("page", lambda c=client, to=task: c.get(to))  # a reload at the task's own address
        html = page.content.decode()
        sizes.append(len(page.content))
        data = _answers(html)
        data["csrfmiddlewaretoken"] = CSRF_RE.search(html).group(1)
        action = ACTION_RE.search(html).group(1)
        done = measured("submit", lambda c=client, to=action, d=data: c.post(to, urlencode(d), content_type=FORM))
        assert done.status_code == 302 and done["Location"].endswith("/done/"), (done.status_code, done.content[:300])
    print(f"{args.rounds} HITs, {args.contexts_per_hit} conversations of {args.turns} turns; page {min(sizes):,}-"
          f"{max(sizes):,} bytes; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, measures in steps.items():
        rows = measures[1:] or measures  # the first of each warms caches (templates, imports)
        cpu = sorted(r[0] for r in rows)[len(rows) // 2]
        wall = sorted(r[1] for r in rows)[len(rows) // 2]
        print(f"{name:>6}: median CPU {cpu * 1000:6.1f} ms, wall {wall * 1000:6.1f} ms, queries {rows[0][2]}")
        if args.queries:
            for sql in statements[name]:
                print(f"        {sql[:300]}")
        if args.profile:
            text = io.StringIO()
            pstats.Stats(profiles[name], stream=text).sort_stats("cumulative").print_stats(60)
            pstats.Stats(profiles[name], stream=text).sort_stats("tottime").print_stats(25)
            print(text.getvalue())


def _answers(html):
    """Every radio answered with its middle offered value, checkboxes unticked, checks as asked."""
    from tests.annotation.live_annotator import SECONDS_RE, VALUE_RE

    offered = {}
    for name, value in VALUE_RE.findall(html):
        offered.setdefault(name, []).append(value)
    data = {name: values[len(values) // 2] for name, values in offered.items()}
    for item in SECONDS_RE.findall(html):
        data[f"seconds-{item}"] = "3.0"
    return data


if __name__ == "__main__":
    main()
