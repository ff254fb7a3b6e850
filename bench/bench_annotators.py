#!/usr/bin/env python
"""Benchmark: 1, 10 and 50 simultaneous annotators against gunicorn (DJANGO_DEBUG=0) on PostgreSQL.

Each annotator is its own HTTP session (cookie jar, CSRF token): open the survey link's start page
once, press Start (a POST that claims a task and answers with its page: "HIT page" times that
request; until 2026-11-29 evening Start redirected, and the times were the POST and the GET
together), answer every item, think, submit, repeat `--hits` times. With the default `--flow next`
each submission presses "Submit and next task", whose answer is the next task's page
(after the first Start, one request a task: "submit" times are that request, "HIT page" times only
the first Start); `--flow classic` goes through Start, the task page, the submission and the
thank-you page for every task. The annotators are shared among
`--client-processes` processes (a thread each). Prints HIT-page p50/p99, submit p50/p99, ratings
stored per second, ratings lost and doubled (counted in the database afterwards), and the CPU
seconds gunicorn, PostgreSQL and the client used.

    .venv/bin/python bench/bench_annotators.py --sizes 1,10,50 --hits 2 --think 3 [--ramp 3] [--task pairwise]

Each annotator comes from their own address by default (`--addresses distinct`: X-Forwarded-For as one
trusted proxy writes it, the server started with TRUSTED_PROXY_COUNT=1), as a crowd arrives from many
places; `--addresses one` sends them all from 127.0.0.1, where newcomers queue on that one address's
cap (new annotators per address and hour: its count and insert are serialised per address).

`--task conversation` runs it on a conversation survey (issue 37): `--contexts-per-hit` whole
conversations of `--turns` turns (DSTC9 averages 34) a HIT, each bot turn with ParlAI's five flags
and the conversation with FED's five aspects, plus a gold conversation; "ratings" are the
whole-conversation ratings, one per aspect of each conversation (flags are left unticked).

`--task pairwise` runs the same load on a pairwise (A/B) survey: the same HITs, annotators and
contexts per HIT, with `--systems` comparisons per context (so as many questions per HIT as the
rating task's `--systems` replies per context) plus a gold pair and a swapped repeat. Its
"ratings" are pairwise judgements; lost and doubled are counted against the pair items of the
submitted HITs.
"""

import argparse
import json
import multiprocessing
import os
import random
import runpy
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.harness import percentile, wait_for  # noqa: E402 (run as a script: the root is on the path only now)

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/ratelab_studies"


def server_env(args):
    env = dict(os.environ)
    env.update(
        DJANGO_DEBUG="0",
        SECRET_KEY="bench-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGH",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
        DATABASE_URL=args.database_url,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DB_CONN_MAX_AGE="60",
        LOG_LEVEL="WARNING",
        # Without a broker each gunicorn worker would load the metric models (MiniLM, METEOR's JVM,
        # GloVe: 15-35 s of CPU each) on a thread after boot, competing with the annotators for the
        # CPUs; a deployment's web processes (with a broker) never load them.
        RATELAB_WARM_MODELS="0",
        # The annotators' addresses arrive as one trusted proxy would write them (`--addresses`).
        TRUSTED_PROXY_COUNT="1" if getattr(args, "addresses", "one") == "distinct" else "0",
    )
    env.pop("CELERY_BROKER_URL", None)
    return env


class BenchFailed(SystemExit):
    """The run measured nothing trustworthy: the bench stops with this message and no figures."""

    def __init__(self, message):
        super().__init__(f"bench_annotators: FAILED, no figures printed: {message}")


def check_same_database(url, used=None):
    """Stop unless this process's settings (or `used`, a DATABASES entry) use `url`'s database, the
    one gunicorn is given.

    Settings read before DATABASE_URL was set put the survey in the default SQLite file while the
    server read PostgreSQL: every annotator met a 404 and nothing was measured.
    """
    import dj_database_url
    from django.conf import settings

    wanted = dj_database_url.parse(url)
    used = used if used is not None else settings.DATABASES["default"]
    keys = ("ENGINE", "NAME", "HOST", "PORT")
    if any(str(wanted.get(k) or "") != str(used.get(k) or "") for k in keys):
        raise BenchFailed(
            f"the bench's settings use {used['ENGINE']} {used['NAME']!s}, not the --database-url given "
            f"to the server ({wanted['ENGINE']} {wanted['NAME']}): the server would not find the survey."
        )


def check_measured(parts, n):
    """Raise BenchFailed if any annotator met an error (a 404 start page, a refused submit) or got no task.

    `parts`: what the client processes sent back (`errors`, `idle`: annotators that got no task);
    `n`: the annotators started. A bench whose annotators were refused measures nothing, so it must
    not print figures as if it had.
    """
    errors = [e for p in parts for e in p["errors"]]
    idle = sum(p["idle"] for p in parts)
    if errors or idle:
        first = "; ".join(errors[:3])
        raise BenchFailed(
            f"{len(errors)} of {n} annotators met an error and {idle} got no task"
            + (f" (first: {first})" if first else "")
            + ". Check that the server and the bench use the same database (--database-url) and that "
            "the survey has work for every annotator."
        )


def ensure_database(url):
    import psycopg2

    name = url.rsplit("/", 1)[-1]
    admin = psycopg2.connect(url.rsplit("/", 1)[0] + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if not cursor.fetchone():
            cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()


def make_survey(n_annotators, args, tag):
    from annotation import services
    from annotation.models import Context, Dataset, Response, System

    # Enough HITs that every annotator can do `--hits` distinct ones.
    hits = -(-n_annotators * args.hits // args.assignments) + args.hits
    if args.task == "conversation":
        return _conversation_survey(n_annotators, args, tag, hits)
    n_contexts = hits * args.contexts_per_hit
    dataset = Dataset.objects.create(name=f"bench-{tag}")
    systems = [System.objects.create(dataset=dataset, name=f"sys{i}") for i in range(args.systems)]
    contexts = Context.objects.bulk_create(
        Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"speaker": "A", "text": f"turn {i}"}])
        for i in range(n_contexts)
    )
    Response.objects.bulk_create(
        Response(context=c, system=s, text=f"reply {c.position} {s.pk}") for c in contexts for s in systems
    )
    pairwise = {}
    if args.task == "pairwise":
        pairwise = {"task_type": "pairwise", "pair_budget": args.systems}
    survey = services.survey_create(
        dataset=dataset,
        name=f"bench-{tag}",
        owner=None,
        contexts_per_hit=args.contexts_per_hit,
        assignments_per_hit=args.assignments,
        attention_checks_per_hit=(2 if pairwise else 1) if args.checks is None else args.checks,
        **pairwise,
        max_hits_per_annotator=args.hits,
        # Every simulated annotator comes from this one machine's address.
        new_annotators_per_address_hour=100_000,
    )
    survey = services.survey_launch(survey=survey)
    _analyze()
    return survey


def _conversation_survey(n_annotators, args, tag, hits):
    import json

    from annotation import services
    from annotation.services.conversations import conversations_import

    rng = random.Random(tag)
    words = [
        "the",
        "a",
        "bot",
        "said",
        "you",
        "like",
        "what",
        "time",
        "place",
        "music",
        "book",
        "film",
        "food",
        "city",
        "trip",
        "game",
        "weekend",
    ]
    lines = []
    for c in range(hits * args.contexts_per_hit):
        turns = [
            {"speaker": "user" if i % 2 == 0 else "system",
             "text": " ".join(rng.choice(words) for _ in range(rng.randint(6, 16))) + rng.choice(".?!")}
            for i in range(args.turns)
        ]  # fmt: skip
        lines.append(json.dumps({"conversation_id": f"c{c}", "system": f"sys{c % args.systems}", "turns": turns}))
    dataset = conversations_import(file=("\n".join(lines) + "\n").encode(), name=f"bench-{tag}")
    survey = services.survey_create(
        dataset=dataset, name=f"bench-{tag}", owner=None, task_type="conversation",
        contexts_per_hit=args.contexts_per_hit, assignments_per_hit=args.assignments,
        attention_checks_per_hit=1 if args.checks is None else args.checks, max_hits_per_annotator=args.hits,
        new_annotators_per_address_hour=100_000,
    )  # fmt: skip
    survey = services.survey_launch(survey=survey)
    _analyze()
    return survey


def _analyze():
    """Refresh the planner's statistics, as autovacuum would in any deployment.

    This machine's PostgreSQL runs with autovacuum off, so the tables the benchmark has just filled
    were never analyzed: the planner then takes the survey's open slots for a couple of rows and
    picks the claim's candidate by walking every open slot of every survey once per HIT, a cost that
    grows with each run's leftovers and that no real server (autovacuum on; a survey launched some
    time before its annotators arrive) would pay.
    """
    from django.db import connection

    from annotation.models import HIT, Annotator, Aspect, Assignment, HITItem, PairwiseJudgement, Rating, Survey

    with connection.cursor() as cursor:
        for model in (Survey, Aspect, HIT, HITItem, Assignment, Annotator, Rating, PairwiseJudgement):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


def drive(plan, conn):
    """One client process: its share of the annotators, a thread each, from the instant `start_at`.

    Runs in its own process so that the client's threads do not queue on one interpreter lock and
    time responses late; the results go back to the parent through `conn`.
    """
    from bench.potato import PotatoAnnotator
    from tests.annotation.live_annotator import LiveAnnotator

    base, survey_token, jobs = plan["base"], plan["survey_token"], plan["jobs"]
    hits, think, start_at = plan["hits"], plan["think"], plan["start_at"]
    started = time.process_time()
    if plan.get("system") == "potato":
        annotators = [(PotatoAnnotator(base, worker_id), delay) for worker_id, delay in jobs]
    else:
        flow = plan.get("flow", "classic")
        annotators = [
            (LiveAnnotator(base, survey_token, worker_id, flow=flow, address=plan["addresses"].get(worker_id)), delay)
            for worker_id, delay in jobs
        ]
    errors = []

    def work(annotator, delay):
        time.sleep(max(0.0, start_at + delay - time.time()))  # arrivals spread over --ramp seconds
        try:
            for _ in range(hits):
                if not annotator.do_hit(think=think * random.uniform(0.5, 1.5)):
                    break
        except Exception as error:
            errors.append(f"{annotator.worker_id}: {error}")

    threads = [threading.Thread(target=work, args=pair) for pair in annotators]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    conn.send(
        {
            "pages": [t for a, _ in annotators for t in a.page_times],
            "submits": [t for a, _ in annotators for t in a.submit_times],
            "hits": sum(len(a.tokens) for a, _ in annotators),
            "idle": sum(1 for a, _ in annotators if not a.tokens),
            "tokens": [t for a, _ in annotators for t in a.tokens],
            "answered": sum(a.answered for a, _ in annotators),
            "errors": errors,
            "cpu_s": time.process_time() - started,
        }
    )
    conn.close()


def cpu_seconds(pid):
    """User + system CPU seconds the process has used so far (Linux /proc); 0 once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_name(url):
    return url.split("?", 1)[0].rsplit("/", 1)[-1]


def server_pids(master, database=None):
    """gunicorn's master and workers, and the PostgreSQL processes (the database's side).

    With `database`, only the backends serving that database ("postgres: 15/main: USER DATABASE
    HOST(PORT) ..." in their command line) and PostgreSQL's own writers: on a shared machine the
    backends of other people's databases are not this run's cost.
    """
    gunicorn, postgres = [master], []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" (", 1)
        except OSError:
            continue
        name, fields = rest.rsplit(")", 1)
        if fields.split()[1] == str(master):
            gunicorn.append(int(pid))
        elif name == "postgres" and (database is None or _serves(int(pid), database)):
            postgres.append(int(pid))
    return gunicorn, postgres


def _serves(pid, database):
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return serves(title, database)


def serves(title, database):
    """Whether a PostgreSQL process (by its title) works for `database`: its backends, and the writers."""
    words = title.split()
    if any(word in title for word in ("walwriter", "checkpointer", "background writer")):
        return True  # the server's own writers: they write this run's commits too
    return len(words) >= 4 and words[0] == "postgres:" and words[3] == database


def run_size(n, args, tag, server):
    survey = make_survey(n, args, tag)
    jobs = [(f"bench-{tag}-{i:03d}", args.ramp * i / n) for i in range(n)]
    target = {
        "system": "ratelab",
        "survey_token": survey.token,
        "database": database_name(args.database_url),
        "flow": args.flow,
    }
    parts, elapsed, cpu = _drive_all(n, args, jobs, target, server)
    check_measured(parts, n)
    expected, stored, doubled = _stored_counts(survey, parts)
    return _figures(n, args, parts, elapsed, cpu, counts=(expected, stored, doubled), system="ratelab")


def _addresses(jobs, args):
    """Each annotator's network address as the server sees it: with `--addresses distinct` (the
    default) one of their own from 10.0.0.0/8, sent as a trusted proxy would (the server runs with
    TRUSTED_PROXY_COUNT=1), as a crowd arrives from many places; with `one`, none (all 127.0.0.1)."""
    if args.addresses != "distinct":
        return {}
    return {worker_id: f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256 + 1}" for i, (worker_id, _) in enumerate(jobs)}


def _drive_all(n, args, jobs, target, server):
    """Run the annotators in `--client-processes` processes from one instant: (parts, seconds, CPU).

    CPU: seconds the server (gunicorn's master and workers) and PostgreSQL used during the run.
    """
    n_proc = max(1, min(args.client_processes, n))
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + 2.0 + 0.5 * n_proc  # after every client process has started
    children = []
    for k in range(n_proc):
        receive, send = context.Pipe(duplex=False)
        plan = {
            **target,
            "base": f"http://127.0.0.1:{args.port}",
            "jobs": jobs[k::n_proc],
            "addresses": _addresses(jobs, args),
            "hits": args.hits,
            "think": args.think,
            "start_at": start_at,
        }
        process = context.Process(target=drive, args=(plan, send))
        process.start()
        children.append((process, receive))
    time.sleep(max(0.0, start_at - time.time()))
    database = target.get("database")
    gunicorn, postgres = server_pids(server.pid, database)
    before = {pid: cpu_seconds(pid) for pid in gunicorn + postgres}
    started = time.perf_counter()
    parts = [receive.recv() for _, receive in children]
    elapsed = time.perf_counter() - started
    # Database connections opened during the run are new processes: count all of theirs.
    gunicorn, postgres = server_pids(server.pid, database)
    cpu = tuple(sum(cpu_seconds(pid) - before.get(pid, 0.0) for pid in pids) for pids in (gunicorn, postgres))
    for process, _ in children:
        process.join()
    return parts, elapsed, cpu


def _figures(n, args, parts, elapsed, cpu, *, counts, system):
    expected, stored, doubled = counts
    pages = [t for p in parts for t in p["pages"]]
    submits = [t for p in parts for t in p["submits"]]
    errors = [e for p in parts for e in p["errors"]]
    server_cpu = cpu[0] + (cpu[1] if system == "ratelab" else 0.0)
    return {
        "system": system,
        "task": args.task,
        "flow": args.flow if system == "ratelab" else "potato: save, then Next",
        "annotators": n,
        "hits_submitted": sum(p["hits"] for p in parts),
        "page_p50_ms": round(1000 * percentile(pages, 50), 1),
        "page_p99_ms": round(1000 * percentile(pages, 99), 1),
        "submit_p50_ms": round(1000 * percentile(submits, 50), 1),
        "submit_p99_ms": round(1000 * percentile(submits, 99), 1),
        "ratings_stored": stored,
        "ratings_per_s": round(stored / elapsed, 1),
        "seconds": round(elapsed, 2),
        "think_s": args.think,
        "ramp_s": args.ramp,
        "cpu_s": {
            "server": round(cpu[0], 2),
            # PostgreSQL's processes (RateLab's database; Potato keeps its state in files)
            "database": round(cpu[1], 2) if system == "ratelab" else 0.0,
            "client": round(sum(p["cpu_s"] for p in parts), 2),
        },
        # server + database CPU per stored rating
        "cpu_ms_per_rating": round(1000 * server_cpu / stored, 1) if stored else None,
        "lost": max(expected - stored, 0),
        "doubled": doubled + max(stored - expected, 0),
        "errors": len(errors),
        "first_errors": errors[:3],
    }


def run_size_potato(n, args, tag):
    """The same load on Potato (bench/potato.py): its own server per size, a fresh task folder."""
    from bench import potato

    folder = potato.write_task(
        Path(args.potato_dir) / tag, n_items=n * args.hits + args.hits, assignments=args.assignments
    )
    server = potato.start_server(args.potato_venv, folder, args.port, args.potato_threads)
    try:
        wait_for(f"http://127.0.0.1:{args.port}/", seconds=120)
        jobs = [(f"bench-{tag}-{i:03d}", args.ramp * i / n) for i in range(n)]
        parts, elapsed, cpu = _drive_all(n, args, jobs, {"system": "potato", "survey_token": ""}, server)
    finally:
        server.terminate()
        server.wait(timeout=60)
    check_measured(parts, n)
    stored, doubled, _ = potato.stored_counts(folder)
    expected = sum(p["answered"] for p in parts)
    return _figures(n, args, parts, elapsed, cpu, counts=(expected, stored, doubled), system="potato")


def _stored_counts(survey, parts):
    """(expected, stored, doubled) answers: ratings, or for a pairwise survey its judgements."""
    from django.db.models import Count

    from annotation.models import Aspect, Assignment, ConversationRating, HITItem, PairwiseJudgement, Rating

    if survey.task_type == "conversation":
        rows = ConversationRating.objects.filter(survey=survey, turn__isnull=True)
        key = ("annotator", "conversation", "aspect")
        tokens = [token for p in parts for token in p["tokens"]]
        shown = HITItem.objects.filter(hit__assignments__token__in=tokens, kind=HITItem.Kind.CONVERSATION).count()
        expected = shown * Aspect.objects.filter(survey=survey, per_turn=False).count()
    elif survey.task_type != "pairwise":
        rows, key = Rating.objects.filter(survey=survey), ("annotator", "response", "aspect")
        # Every real reply of the submitted HITs, on every question: a check's block (the check and
        # its fillers, which the page does not tell apart from real replies) is answered, not stored,
        # so the answers counted over HTTP (`answered`) are more than the ratings kept.
        tokens = [token for p in parts for token in p["tokens"]]
        replies = HITItem.objects.filter(hit__assignments__token__in=tokens, kind=HITItem.Kind.RESPONSE).count()
        expected = replies * Aspect.objects.filter(survey=survey).count()
    else:
        rows, key = PairwiseJudgement.objects.filter(survey=survey), ("annotator", "response_a", "response_b", "aspect")
        # One judgement per pair item of every submitted HIT (one aspect: overall).
        submitted = Assignment.objects.filter(hit__survey=survey, status__in=Assignment.FINISHED)
        per_hit = dict(
            HITItem.objects.filter(hit__survey=survey, kind=HITItem.Kind.PAIR)
            .values("hit")
            .annotate(n=Count("pk"))
            .values_list("hit", "n")
        )
        expected = sum(per_hit.get(hit, 0) for hit in submitted.values_list("hit", flat=True))
    stored = rows.count()
    doubled = sum(row["n"] - 1 for row in rows.values(*key).annotate(n=Count("pk")).filter(n__gt=1))
    return expected, stored, doubled


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,50", help="Comma-separated numbers of simultaneous annotators.")
    parser.add_argument("--hits", type=int, default=2, help="HITs per annotator.")
    parser.add_argument("--contexts-per-hit", type=int, default=5)
    parser.add_argument("--systems", type=int, default=4, help="Responses per context.")
    parser.add_argument("--assignments", type=int, default=3, help="Annotators per HIT.")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="Mean seconds an annotator spends on a HIT between page and submit (0: back-to-back, a stress test).",
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="Seconds over which the annotators arrive, evenly spaced (0: all at the same instant, a burst).",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="gunicorn worker processes (default: the project's gunicorn.conf.py, as many as cores, at least 2).",
    )
    parser.add_argument("--threads", type=int, default=4, help="Threads per gunicorn worker (gthread only).")
    parser.add_argument("--worker-class", default="sync", choices=["sync", "gthread"])
    parser.add_argument(
        "--client-processes",
        type=int,
        default=2,
        help="Client processes the annotators are shared among (threads in each), so the client's own "
        "interpreter lock does not delay the timing of responses.",
    )
    parser.add_argument("--port", type=int, default=8111)
    parser.add_argument(
        "--task", default="rate", choices=["rate", "pairwise", "conversation"], help="The survey's task type."
    )
    parser.add_argument(
        "--flow",
        default="next",
        choices=["next", "classic"],
        help='next: the task page\'s default "Submit and next task" (one request a task after the first '
        "Start); classic: Start, task page, submit, thank-you page for every task (4 requests).",
    )
    parser.add_argument("--turns", type=int, default=34, help="conversation: turns per conversation (DSTC9: 34).")
    parser.add_argument(
        "--checks",
        type=int,
        default=None,
        help="Attention checks per HIT (default 1 for rate, 2 for pairwise); 0 compares like for like with a "
        "tool that shows no check (Potato's mode).",
    )
    parser.add_argument(
        "--addresses",
        default="distinct",
        choices=["distinct", "one"],
        help="distinct: each annotator from their own address (X-Forwarded-For behind one trusted proxy, as a "
        "crowd arrives); one: all from 127.0.0.1 (newcomers from one address queue on its cap's lock).",
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB))
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "annotators.json"))
    parser.add_argument(
        "--system",
        default="ratelab",
        choices=["ratelab", "potato"],
        help="potato: the same load on Potato (bench/potato.py), from --potato-venv; one rating per page.",
    )
    parser.add_argument("--potato-venv", default="/tmp/potato-venv", help="A virtualenv with potato-annotation.")
    parser.add_argument("--potato-threads", type=int, default=8, help="Threads of Potato's one gunicorn worker.")
    parser.add_argument("--potato-dir", default="/tmp/potato-bench", help="Where Potato's task folders are made.")
    args = parser.parse_args()
    if args.system == "potato":
        return main_potato(args)

    # The server's environment first: reading gunicorn.conf.py imports the project (config/__init__.py
    # loads the Celery app, which reads the settings), and settings read before DATABASE_URL is set
    # would put the survey in the default SQLite file while gunicorn serves PostgreSQL: every
    # annotator then met a 404 and the bench measured nothing.
    env = server_env(args)
    os.environ.update(env)
    if args.workers is None:
        args.workers = runpy.run_path(str(ROOT / "gunicorn.conf.py"))["workers"]
    ensure_database(args.database_url)
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([python, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    check_same_database(args.database_url)

    gunicorn = [
        str(Path(python).parent / "gunicorn"),
        "config.wsgi",
        "--bind",
        f"127.0.0.1:{args.port}",
        "--workers",
        str(args.workers),
        "--threads",
        str(args.threads),
        "--worker-class",
        args.worker_class,
        "--log-level",
        "warning",
    ]
    server = subprocess.Popen(gunicorn, cwd=ROOT, env=env)
    print(
        f"gunicorn {args.workers} {args.worker_class} workers"
        + (f" x {args.threads} threads" if args.worker_class == "gthread" else "")
        + f", {args.client_processes} client processes, {args.hits} HITs per annotator, flow {args.flow}",
        flush=True,
    )
    results = []
    try:
        wait_for(f"http://127.0.0.1:{args.port}/accounts/login/")
        tag = time.strftime("%Y%m%d%H%M%S")
        for run, size in enumerate(int(s) for s in args.sizes.split(",") if s.strip()):
            results.append(run_size(size, args, f"{tag}-{run}-{size}", server))
            report(results[-1], args)
    finally:
        server.terminate()
        server.wait(timeout=30)
    finish(results, args)


def main_potato(args):
    print(f"Potato: gunicorn 1 worker x {args.potato_threads} threads ({args.potato_venv})", flush=True)
    results = []
    tag = time.strftime("%Y%m%d%H%M%S")
    for run, size in enumerate(int(s) for s in args.sizes.split(",") if s.strip()):
        results.append(run_size_potato(size, args, f"{tag}-{run}-{size}"))
        report(results[-1], args)
    finish(results, args)


def report(result, args):
    cpu = result["cpu_s"]
    print(
        f"{result['system']}: {result['annotators']:>3} annotators (think {args.think} s, ramp {args.ramp} s): "
        f"HIT page p50 {result['page_p50_ms']} ms p99 {result['page_p99_ms']} ms | "
        f"submit p50 {result['submit_p50_ms']} ms p99 {result['submit_p99_ms']} ms | "
        f"{result['ratings_stored']} ratings, {result['ratings_per_s']}/s | lost {result['lost']} "
        f"doubled {result['doubled']} errors {result['errors']} | CPU s: server {cpu['server']}, "
        f"database {cpu['database']}, client {cpu['client']}; {result['cpu_ms_per_rating']} ms server+database "
        "per rating",
        flush=True,
    )


def finish(results, args):
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"settings": vars(args), "results": results}, indent=2))
    print(f"wrote {args.out}")
    if any(r["lost"] or r["doubled"] or r["errors"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
