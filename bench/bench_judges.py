"""Benchmark LLM judges against a local OpenAI-compatible server that answers at once.

    python bench/bench_judges.py [--responses 10000] [--concurrency 32] [--chunk-size 500 --chunk-size 2000]
        [--database-url URL]

The server (tests/scoring/chat_server.py, a ThreadingHTTPServer with keep-alive) runs in a process
of its own, so it does not share this process's interpreter lock. Printed:
1. the client alone: `judge_prompts` on N prompts (no database), requests/s;
2. end to end: `compute_metrics --metric judge:bench` on a fresh SQLite database (or --database-url)
   holding N responses, one child process per chunk size so that each peak RSS is its own:
   requests/s, seconds, and the child's peak RSS, then a second run answered from the cache
   (requests made: 0) with its seconds.
The requests/s figure is the one issue 22 asks to be >= 200 with concurrency 32.
"""

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scoring.judges import prompts  # noqa: E402  (after the path set-up above)
from scoring.judges.client import JudgeSettings, judge_prompts  # noqa: E402
from scoring.judges.parsing import parse_rating  # noqa: E402
from tests.scoring.chat_server import ChatServer  # noqa: E402


def serve(port_queue, count_queue, stop):
    server = ChatServer(answer=lambda body, n: "Score: 4").start()
    port_queue.put(server.httpd.server_address[1])
    stop.wait()
    count_queue.put(len(server.requests))
    server.stop()


def texts(n):
    return [f"reply number {i}: i went to the park with my dog and we played for a while" for i in range(n)]


def client_alone(base_url, n, concurrency):
    template = prompts.get_template(prompts.RATING)
    messages = [prompts.rating_messages(template, context=["hi", "how was your day?"], response=t) for t in texts(n)]
    settings = JudgeSettings(base_url=base_url, model="bench", concurrency=concurrency, allow_private=True)
    started = time.perf_counter()
    verdicts = judge_prompts(settings, messages, parse_rating)
    seconds = time.perf_counter() - started
    assert all(v.values == [4.0] for v in verdicts)
    return seconds


def child(args):
    """One end-to-end measurement in this (fresh) process: prints one JSON line."""
    os.environ["DATABASE_URL"] = args.database_url
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["JUDGE_ALLOW_PRIVATE_HOSTS"] = "1"  # the bench's server listens on 127.0.0.1
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from annotation.models import Context, Dataset, Response, System
    from scoring.models import Judge, JudgeCacheEntry, MetricScore

    settings.DEBUG = False
    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-judges")
    Dataset.objects.filter(name="bench-judges", owner=user).delete()
    Judge.objects.filter(owner=user).delete()
    dataset = Dataset.objects.create(name="bench-judges", owner=user)
    system = System.objects.create(dataset=dataset, name="generated")
    contexts = Context.objects.bulk_create(
        Context(dataset=dataset, external_id=f"c{i}", position=i, turns=[{"speaker": None, "text": "hi"}])
        for i in range(args.responses)
    )
    Response.objects.bulk_create(
        Response(context=c, system=system, text=t) for c, t in zip(contexts, texts(args.responses), strict=True)
    )
    Judge.objects.create(owner=user, name="bench", base_url=args.base_url, model="bench", concurrency=args.concurrency)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timings = []
    quiet = open(os.devnull, "w")  # noqa: SIM115 (closed with the process)
    for _ in range(2):  # the second run is answered from the cache
        MetricScore.objects.filter(metric="judge:bench").delete()
        started = time.perf_counter()
        call_command(
            "compute_metrics", "--dataset", "bench-judges", "--owner", user.username, "--metric", "judge:bench",
            "--chunk-size", str(args.child_chunk), "--threads", "1", "--force", "--no-progress", stdout=quiet,
        )  # fmt: skip
        timings.append(time.perf_counter() - started)
    stored = MetricScore.objects.filter(metric="judge:bench", value=4.0).count()
    print(
        json.dumps(
            {
                "seconds": timings[0],
                "cached_seconds": timings[1],
                "stored": stored,
                "cache_rows": JudgeCacheEntry.objects.count(),
                "rss_before_mb": rss_before / 1024,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--responses", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk-size", type=int, action="append", default=[])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--child-chunk", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_chunk:
        return child(args)
    port_queue, count_queue, stop = multiprocessing.Queue(), multiprocessing.Queue(), multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(port_queue, count_queue, stop), daemon=True)
    server.start()
    base_url = f"http://127.0.0.1:{port_queue.get(timeout=30)}/v1"
    n, concurrency = args.responses, args.concurrency
    print(f"{n} responses, concurrency {concurrency}, server at {base_url} (own process)")
    seconds = client_alone(base_url, n, concurrency)
    print(f"client alone:  {n / seconds:8.0f} requests/s  ({seconds:.2f} s)")
    with tempfile.TemporaryDirectory() as folder:
        for chunk in args.chunk_size or [500, 2000]:
            url = args.database_url or f"sqlite:///{folder}/bench-{chunk}.sqlite3"
            command = [sys.executable, __file__, "--child-chunk", str(chunk), "--responses", str(n),
                       "--concurrency", str(concurrency), "--base-url", base_url, "--database-url", url]  # fmt: skip
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            result = json.loads(out)
            assert result["stored"] == n, result
            print(
                f"end to end, chunk {chunk:5d}: {n / result['seconds']:8.0f} requests/s ({result['seconds']:.2f} s); "
                f"rerun from the cache {result['cached_seconds']:.2f} s, no request; "
                f"peak RSS {result['peak_rss_mb']:.0f} MB (after Django and the data: {result['rss_before_mb']:.0f} MB)"
            )
    stop.set()
    asked = count_queue.get(timeout=30)
    expected = n * (1 + len(args.chunk_size or [500, 2000]))
    print(f"server answered {asked} requests (expected {expected}: the reruns made none)")
    server.join(timeout=10)
    return None


if __name__ == "__main__":
    main()
