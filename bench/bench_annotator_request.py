#!/usr/bin/env python
"""Where an annotator's request spends its CPU: per request of each flow, in this process.

Drives one annotator through `--hits` tasks of a one-reply-per-page survey on PostgreSQL with
Django's test client (no HTTP server: what is left is the application's own Python), in both flows
of the task page: classic (Start, task page, submit, thank-you page) and next ("Submit and next
task", one request a task). Prints, per kind of request, the CPU milliseconds and the queries it
took; with `--breakdown`, the CPU of a submit-and-next request split into its parts, from a
profile (cProfile on CPU time, which slows everything: read the shares, not the milliseconds).

    .venv/bin/python bench/bench_annotator_request.py --database-url postgres://postgres@127.0.0.1:5432/ratelab_x
"""

import argparse
import cProfile
import os
import pstats
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
ACTION_RE = re.compile(r'<form method="post" action="(/a/[^"]+/)"')
FIELD_RE = re.compile(r'name="(score-\d+-[\w-]+)"')
SECONDS_RE = re.compile(r'name="seconds-(\d+)"')

# Parts of a submit-and-next request: (label, file suffix, function name).
PARTS = [
    ("whole request, framework and middleware included", "django/core/handlers/base.py", "get_response"),
    ("finding the task and its annotator", "annotation/views/task.py", "assignment_for_annotator"),
    ("storing the answers (assignment_submit)", "annotation/services/assignments.py", "assignment_submit"),
    ("claiming the next task (assignment_claim)", "annotation/services/claims.py", "assignment_claim"),
    ("the next task's page (context and template)", "annotation/views/task.py", "task_page"),
    ("the ORM turning querysets into SQL", "django/db/models/sql/compiler.py", "as_sql"),
]


def setup(database_url):
    os.environ.update(
        DATABASE_URL=database_url,
        DJANGO_DEBUG="0",
        SECRET_KEY="bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGH",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="WARNING",
    )
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from bench.bench_annotators import ensure_database

    ensure_database(database_url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)  # DEBUG=0 pages name hashed static files


def survey(hits, checks):
    from annotation import services
    from annotation.models import Context, Dataset, Response, System

    tag = f"{time.strftime('%Y%m%d%H%M%S')}-{time.perf_counter_ns() % 10**9}"  # two surveys in one second differ
    dataset = Dataset.objects.create(name=f"request-{tag}")
    system = System.objects.create(dataset=dataset, name="sys")
    contexts = Context.objects.bulk_create(
        Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"speaker": "A", "text": f"turn {i}"}])
        for i in range(2 * hits + 2)
    )
    Response.objects.bulk_create(Response(context=c, system=system, text=f"reply {c.position}") for c in contexts)
    made = services.survey_create(
        dataset=dataset,
        name=f"request-{tag}",
        owner=None,
        contexts_per_hit=1,
        assignments_per_hit=1,
        attention_checks_per_hit=checks,
        max_hits_per_annotator=hits + 1,
        new_annotators_per_address_hour=100_000,
    )
    return services.survey_launch(survey=made)


class Annotator:
    """One annotator in this process: the CPU and the queries of each request, by kind."""

    def __init__(self, token):
        from django.test import Client

        self.client, self.link, self.seen = Client(), f"/s/{token}/", {}

    def timed(self, kind, send):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            started = time.process_time()
            response = send()
            cpu = time.process_time() - started
        n = sum(1 for q in queries.captured_queries if not q["sql"].startswith(("BEGIN", "COMMIT")))
        totals = self.seen.setdefault(kind, [0, 0.0, 0])
        totals[0], totals[1], totals[2] = totals[0] + 1, totals[1] + cpu, totals[2] + n
        return response

    def start(self, kind="Start (claim)"):
        if "csrf" not in self.__dict__:
            self.csrf = CSRF_RE.search(self.client.get(self.link).content.decode()).group(1)
        started = self.timed(
            kind, lambda: self.client.post(self.link, {"action": "start", "csrfmiddlewaretoken": self.csrf})
        )
        return self.timed("task page (GET)", lambda: self.client.get(started["Location"]))

    @staticmethod
    def answers(html, then):
        data = {"csrfmiddlewaretoken": CSRF_RE.search(html).group(1), **dict.fromkeys(set(FIELD_RE.findall(html)), "3")}
        data.update({f"seconds-{item}": "3.0" for item in SECONDS_RE.findall(html)})
        return ACTION_RE.search(html).group(1), {**data, **({"then": then} if then else {})}


def run_flow(flow, hits, checks):
    annotator = Annotator(survey(hits, checks).token)
    page = annotator.start()
    for _ in range(hits):
        html = page.content.decode()
        url, data = annotator.answers(html, "next" if flow == "next" else "")
        if flow == "next":
            page = annotator.timed("Submit and next task (POST)", lambda u=url, d=data: annotator.client.post(u, d))
            assert page.status_code == 200, page.status_code
        else:
            done = annotator.timed("submit (POST)", lambda u=url, d=data: annotator.client.post(u, d))
            annotator.timed("thank-you page (GET)", lambda d=done: annotator.client.get(d["Location"]))
            page = annotator.start()
    return annotator.seen


def breakdown(hits, checks):
    profile = cProfile.Profile(time.process_time)
    annotator = Annotator(survey(hits, checks).token)
    page = annotator.start()
    for _ in range(hits):
        url, data = annotator.answers(page.content.decode(), "next")
        profile.enable()
        page = annotator.client.post(url, data)
        profile.disable()
    stats = pstats.Stats(profile).stats
    whole = None
    for label, suffix, name in PARTS:
        cpu = sum(row[3] for (path, _line, func), row in stats.items() if path.endswith(suffix) and func == name)
        whole = whole or cpu
        print(f"  {label:52s} {100 * cpu / whole:5.1f} %")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ratelab_studies"),
    )
    parser.add_argument("--hits", type=int, default=40)
    parser.add_argument(
        "--checks", type=int, default=0, help="Attention checks per HIT (0: like the Potato comparison)."
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="Also split a submit-and-next request's CPU into parts."
    )
    args = parser.parse_args()
    setup(args.database_url)
    for flow in ("classic", "next"):
        seen = run_flow(flow, args.hits, args.checks)
        total = sum(cpu / n for n, cpu, _ in seen.values() if n >= args.hits - 1)
        print(f"{flow}: {1000 * total:.1f} ms of application CPU per task (one reply per page)")
        for kind, (n, cpu, queries) in seen.items():
            print(f"  {kind:32s} {n:4d} requests  {1000 * cpu / n:6.2f} ms CPU  {queries / n:5.1f} queries")
    if args.breakdown:
        print("Submit and next task, share of the request's CPU (profiled):")
        breakdown(args.hits, args.checks)


if __name__ == "__main__":
    main()
