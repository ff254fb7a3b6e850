"""First-request and first-task latency of a fresh process, with and without the boot warm-up.

    python bench/bench_warmup.py [--port 8806] [--repeats 3] [--only first-metric-run] [--json out.json]

Loading the apps imports no heavy library (tests/test_startup.py); config/runtime/warmup.py imports them at
boot instead, in processes that will compute with them. This measures what that buys, on the demo
study (`manage.py demo`, in a scratch SQLite database and media folder made here):
- web: `gunicorn config.wsgi` (one worker, gunicorn.conf.py's `when_ready` warm-up on or off with
  RATELAB_WARMUP), logged in as the demo researcher, the first request for a report plot (drawn
  with matplotlib; the disk cache of plots is emptied before each server starts) and a second one
  of another kind (the same work with everything loaded). Boot is the time until gunicorn answers.
- worker: a fresh interpreter that loads the apps as a Celery worker process does, then runs the
  warm-up of `worker_process_init` (on) or not (off), then its first metric chunk (BLEU-1..4 +
  ROUGE-L + CIDEr on the demo's responses: pandas, pyarrow) and then its first report refresh
  (scipy.stats, scikit-learn; pandas is then loaded already), each timed.
- first metric run (F02 of the 2026-11-29 browser walk): a fresh interpreter that starts as a
  worker process does (the import warm-up, then the model warm-up thread of
  config/warmup.warm_models_in_background unless RATELAB_WARM_MODELS=0), computes all the engine's
  metrics on an 18-response dataset (6 contexts x 3 systems) through the `compute_metrics` task,
  then a second time. Three starts: models not warmed (what every first run paid before); warmed,
  the run asked for at once (it waits for the loads under way); warmed, the run asked for once the
  warm-up is done (a server up for a minute). Each first run's model loads are listed
  (scoring.metrics.resources: what it waited for itself).
The web and worker rows time the import warm-up alone (RATELAB_WARM_MODELS=0 there).
Medians of `--repeats` fresh processes. Wall-clock seconds on a shared machine: compare the columns
of one run.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
WORKER_SCRIPT = """
import json, sys, time
import django
django.setup()
from config.runtime import warmup
from analysis.models import Report
from analysis.services.build import report_refresh
from annotation.models import Dataset
from scoring import tasks
from scoring.services.metrics.compute import metrics_compute

warm = warmup.warm(warmup.WORKER)
dataset = Dataset.objects.get(name="demo")
report = Report.objects.get(dataset=dataset, survey=None)
run = metrics_compute(dataset=dataset, metrics=["bleu1", "bleu2", "bleu3", "bleu4", "rouge_l", "cider"],
                      force=True, dispatch=False, chunk_size=100000)
chunk = run.chunks.get()
start = time.perf_counter()
tasks.compute_metrics_chunk.apply(args=(run.id, chunk.id), throw=True)
chunk_s = time.perf_counter() - start
start = time.perf_counter()
report_refresh(report=report)
report_s = time.perf_counter() - start
print(json.dumps({"warm_up_s": warm, "first_report_s": report_s, "first_chunk_s": chunk_s}))
"""


FIRST_RUN_SCRIPT = """
import json, sys, time
start = time.perf_counter()
import django
django.setup()
from config.runtime import warmup
warmup.warm(warmup.WORKER)  # as worker_process_init does
thread = warmup.warm_models_in_background() if hasattr(warmup, "warm_models_in_background") else None
boot = time.perf_counter() - start
if sys.argv[1] == "after-warm-up" and thread is not None:
    thread.join()
warmed = time.perf_counter() - start
from annotation.models import Dataset
from scoring import tasks
from scoring.services.metrics.compute import metrics_compute
loads = {}
try:
    from scoring.metrics import resources
    ensure = resources.ensure
    def timed(key):
        seconds = ensure(key)
        if seconds is not None:
            loads[key] = round(seconds, 2)
        return seconds
    resources.ensure = timed
except ImportError:  # before the resources existed
    pass
dataset = Dataset.objects.get(name="first-run-18")
out = {"boot_s": boot, "asked_at_s": warmed}
for label in ("first", "second"):
    loads.clear()
    begin = time.perf_counter()
    run = metrics_compute(dataset=dataset, force=True, dispatch=False)
    tasks.compute_metrics.apply(args=(run.id,), throw=True)
    out[label + "_s"] = time.perf_counter() - begin
    out[label + "_loads"] = dict(loads)
    out["metrics"] = len(run.metrics)
print(json.dumps(out))
"""
FIRST_RUN_RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["Hello there, how was your weekend?", "It was fine, I went hiking with my sister."],
        "references": ["That sounds lovely, where did you go?", "Nice! Was the weather good?"],
        "responses": [
            {"system": "hred", "text": "i don't know ."},
            {"system": "lstm", "text": "where did you go hiking ?"},
            {"system": "human", "text": f"Oh nice, which trail did you take this time ({i})?"},
        ],
    }
    for i in range(6)
]
FIRST_RUN_MODES = ("not warmed", "warmed, asked at once", "warmed, asked after it")

REPORT_SCRIPT = """
import django
django.setup()
from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create, report_refresh
from annotation.models import Dataset
report = report_get_or_create(dataset=Dataset.objects.get(name="demo"), params=report_params())
report_refresh(report=report)
print(report.pk)
"""


def prepare(env):
    """The demo study, its metric scores and a stored dataset report (untimed): the report's id."""
    for command in (["migrate", "-v0"], ["demo", "--base-url", "http://127.0.0.1"]):
        subprocess.run([PYTHON, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    done = subprocess.run([PYTHON, "-c", REPORT_SCRIPT], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1]


def prepare_first_run(env):
    """The 18-response dataset of the first-run figures (untimed)."""
    subprocess.run([PYTHON, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True)
    records = "".join(json.dumps(record) + "\n" for record in FIRST_RUN_RECORDS)
    script = (
        "import django, sys\ndjango.setup()\nfrom annotation.services import dataset_import\n"
        "dataset_import(file=sys.stdin.buffer.read(), name='first-run-18', fmt='jsonl')\n"
    )
    subprocess.run([PYTHON, "-c", script], cwd=ROOT, env=env, input=records.encode(), check=True, capture_output=True)


def first_run_once(env, mode):
    warm = mode != FIRST_RUN_MODES[0]
    done = subprocess.run(
        [PYTHON, "-c", FIRST_RUN_SCRIPT, "after-warm-up" if mode == FIRST_RUN_MODES[2] else "at-once"],
        cwd=ROOT,
        env={**env, "RATELAB_WARMUP": "1", "RATELAB_WARM_MODELS": "1" if warm else "0"},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_metric_run(env, repeats):
    prepare_first_run(env)
    report = {}
    print(
        f"{'first metric run, 18 responses':36} {'boot':>7} {'asked at':>9} {'1st run':>8} {'2nd run':>8}",
        " loads in the 1st run",
    )
    for mode in FIRST_RUN_MODES:
        runs = [first_run_once(env, mode) for _ in range(repeats)]
        figures = {
            key: statistics.median(run[key] for run in runs) for key in ("boot_s", "asked_at_s", "first_s", "second_s")
        }
        figures["first_loads"] = [run["first_loads"] for run in runs]
        figures["metrics"] = runs[0]["metrics"]
        report[mode] = figures
        loads = ", ".join(f"{key} {seconds:.1f} s" for key, seconds in runs[0]["first_loads"].items()) or "none"
        print(
            f"{mode + ' (' + str(figures['metrics']) + ' metrics)':36} {figures['boot_s']:6.2f}s",
            f"{figures['asked_at_s']:8.2f}s {figures['first_s']:7.2f}s {figures['second_s']:7.2f}s ",
            loads,
        )
    return report


def _get(opener, url, data=None):
    start = time.perf_counter()
    with opener.open(url, data=data, timeout=120) as response:
        body = response.read()
    return time.perf_counter() - start, body


def web_once(env, port, warm, report_pk):
    """(boot s, first plot s, second plot s) for one fresh gunicorn."""
    shutil.rmtree(Path(env["MEDIA_ROOT"]) / "analysis" / "plots", ignore_errors=True)
    server_env = {**env, "RATELAB_WARMUP": "1" if warm else "0", "RATELAB_WARM_MODELS": "0"}
    base = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    server = subprocess.Popen(
        [PYTHON, "-m", "gunicorn", "config.wsgi", "--workers", "1", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=server_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        while True:
            try:
                _, page = _get(opener, f"{base}/accounts/login/")
                break
            except OSError:
                if server.poll() is not None or time.perf_counter() - start > 120:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.05)
        boot = time.perf_counter() - start
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        form = {"username": "demo", "password": "demo-password", "csrfmiddlewaretoken": token}
        _get(opener, f"{base}/accounts/login/", urllib.parse.urlencode(form).encode())
        first, _ = _get(opener, f"{base}/analysis/reports/{report_pk}/plots/human.png")
        second, _ = _get(opener, f"{base}/analysis/reports/{report_pk}/plots/human.svg")
        return boot, first, second
    finally:
        server.terminate()
        server.wait(timeout=30)


def worker_once(env, warm):
    done = subprocess.run(
        [PYTHON, "-c", WORKER_SCRIPT],
        cwd=ROOT,
        env={**env, "RATELAB_WARMUP": "1" if warm else "0", "RATELAB_WARM_MODELS": "0"},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8806)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="Write the figures here too.")
    parser.add_argument("--only", choices=("first-metric-run",), help="Time only this part.")
    args = parser.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="bench-warmup-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{scratch / 'db.sqlite3'}",
        "MEDIA_ROOT": str(scratch / "media"),
        "RATELAB_DATA_DIR": str(scratch / "var"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("CELERY_BROKER_URL", None)
    try:
        if args.only == "first-metric-run":
            report = {"first_metric_run": first_metric_run(env, args.repeats)}
            if args.json:
                Path(args.json).write_text(json.dumps(report, indent=2))
            return report
        pk = prepare(env)
        report = {"web": {}, "worker": {}}
        print(f"{'':22} {'warm-up off':>12} {'warm-up on':>12}")
        web = {warm: [web_once(env, args.port, warm, pk) for _ in range(args.repeats)] for warm in (False, True)}
        for i, label in enumerate(("gunicorn boot", "first plot request", "second plot request")):
            off, on = (statistics.median(run[i] for run in web[warm]) for warm in (False, True))
            report["web"][label] = {"off_s": off, "on_s": on}
            print(f"{label:22} {off:11.2f}s {on:11.2f}s")
        work = {warm: [worker_once(env, warm) for _ in range(args.repeats)] for warm in (False, True)}
        for key, label in (
            ("warm_up_s", "worker warm-up"),
            ("first_chunk_s", "first metric chunk"),
            ("first_report_s", "then a report refresh"),
        ):
            off, on = (statistics.median(run[key] or 0.0 for run in work[warm]) for warm in (False, True))
            report["worker"][label] = {"off_s": off, "on_s": on}
            print(f"{label:22} {off:11.2f}s {on:11.2f}s")
        report["first_metric_run"] = first_metric_run(env, args.repeats)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
