#!/usr/bin/env python
"""Researcher page times on the demo study, as `make demo` serves it (issue 35, F28).

    .venv/bin/python bench/bench_pages.py [--database-url sqlite:////tmp/demo.sqlite3] [--build]
        [--repeats 10] [--port 8865] [--json out.json]

Serves the demo database with gunicorn (one sync worker, RATELAB_DEMO=1: debug off, static files
through WhiteNoise), logs in as the demo researcher and requests each researcher page of the
browser walk's timing table `--repeats` times (after one untimed request, so that a page that
queues work or fills a cache on its first view is timed as it is usually met). Prints, per page,
the status, HTML size (plain and gzipped), p50 and p95 of the full response time, and flags pages
whose p95 is over 300 ms. The login POST is timed separately (fresh sessions, `--login-repeats`).
`--build` runs migrate + `manage.py demo` first (minutes: the demo computes 28 metrics and a report).
Wall-clock times on a shared machine: run it twice and compare.
"""

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.harness import percentile, wait_for  # noqa: E402 (run as a script: the root is on the path only now)

PYTHON = sys.executable
TARGET_MS = 300
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def server_env(args):
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "SECRET_KEY", "CELERY_BROKER_URL")}
    env.update(RATELAB_DEMO="1", DATABASE_URL=args.database_url, LOG_LEVEL="WARNING", RATELAB_DATA_DIR=args.data_dir)
    return env


def researcher_urls():
    """The walk's researcher pages, with this database's ids (demo dataset and surveys)."""
    from annotation.models import Annotator, Dataset, Survey

    dataset = Dataset.objects.order_by("pk").first()
    rate = Survey.objects.filter(dataset=dataset, task_type="rate").order_by("pk").first()
    pairwise = Survey.objects.filter(task_type="pairwise").order_by("pk").first()
    annotator = Annotator.objects.filter(ratings__survey=rate).order_by("pk").first()
    urls = [
        "/datasets/",
        f"/datasets/{dataset.pk}/",
        f"/datasets/{dataset.pk}/?page=2",
        f"/datasets/{dataset.pk}/?q=the",
        "/datasets/upload/",
        f"/datasets/{dataset.pk}/ratings/upload/",
        "/surveys/",
        "/surveys/new/",
        f"/surveys/new/?dataset={dataset.pk}",
        f"/surveys/{rate.pk}/",
        f"/surveys/{rate.pk}/preview/",
        "/quality/",
        f"/surveys/{rate.pk}/quality/",
        "/scoring/metrics/",
        f"/scoring/datasets/{dataset.pk}/metrics/",
        "/scoring/judges/",
        "/scoring/adem/",
        "/scoring/adem/train/",
        "/scoring/adem/experiments/",
        "/scoring/adem/tokens/",
        "/analysis/reports/",
        f"/analysis/datasets/{dataset.pk}/report/",
    ]
    if annotator:
        urls.append(f"/surveys/{rate.pk}/quality/annotators/{annotator.pk}/")
    if pairwise:
        urls += [f"/surveys/{pairwise.pk}/", f"/analysis/surveys/{pairwise.pk}/report/"]
    return urls


class Browser:
    def __init__(self, base):
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))

    def open(self, path, data=None, gzip_ok=False):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base + path, data=body)
        if gzip_ok:
            request.add_header("Accept-Encoding", "gzip")
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=120) as response:
                content, status, url = response.read(), response.status, response.geturl()
        except urllib.error.HTTPError as error:
            content, status, url = error.read(), error.code, error.geturl()
        return status, url, content, time.perf_counter() - started

    def login(self, username, password):
        _, _, html, _ = self.open("/accounts/login/")
        csrf = CSRF_RE.search(html.decode()).group(1)
        form = {"username": username, "password": password, "csrfmiddlewaretoken": csrf}
        # The POST alone, without following its redirect to the landing page.
        status, url, seconds = self._post_no_redirect("/accounts/login/", form)
        return status, url, seconds

    def _post_no_redirect(self, path, form):
        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        jar = next(h.cookiejar for h in self.opener.handlers if isinstance(h, urllib.request.HTTPCookieProcessor))
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
        request = urllib.request.Request(self.base + path, data=urllib.parse.urlencode(form).encode())
        started = time.perf_counter()
        try:
            with opener.open(request, timeout=120) as response:
                status, url = response.status, response.geturl()
        except urllib.error.HTTPError as error:
            status, url = error.code, error.headers.get("Location", "")
        return status, url, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="sqlite:////tmp/ratelab-bench-pages/demo.sqlite3")
    parser.add_argument("--data-dir", default="/tmp/ratelab-bench-pages/var", help="RATELAB_DATA_DIR of the server")
    parser.add_argument("--build", action="store_true", help="migrate and run `manage.py demo` first")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--login-repeats", type=int, default=5)
    parser.add_argument("--port", type=int, default=8865)
    parser.add_argument("--json", default="")
    args = parser.parse_args()

    env = server_env(args)
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.database_url.startswith("sqlite:///"):
        Path(args.database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    base = f"http://127.0.0.1:{args.port}"
    for command in (["migrate", "--noinput", "-v", "0"], ["collectstatic", "--noinput", "-v", "0"]) + (
        (["demo", "--base-url", base],) if args.build else ()
    ):
        subprocess.run([PYTHON, "manage.py", *command], cwd=ROOT, env=env, check=True)

    import django

    django.setup()
    from annotation.services.demo import DEMO_DEV_PASSWORD, DEMO_USERNAME

    urls = researcher_urls()
    password = os.environ.get("DEMO_PASSWORD") or DEMO_DEV_PASSWORD
    gunicorn = [str(Path(PYTHON).parent / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{args.port}"]
    server = subprocess.Popen([*gunicorn, "--workers", "1", "--log-level", "warning"], cwd=ROOT, env=env)
    rows, logins = [], []
    try:
        wait_for(base + "/accounts/login/")
        for _ in range(args.login_repeats):
            status, _url, seconds = Browser(base).login(DEMO_USERNAME, password)
            if status != 302:
                raise SystemExit(f"bench_pages: the demo login answered {status}: is this the demo database?")
            logins.append(seconds)
        browser = Browser(base)
        browser.login(DEMO_USERNAME, password)
        for path in urls:
            browser.open(path)  # untimed first view
            times, status, plain, packed = [], None, b"", b""
            for _ in range(args.repeats):
                status, _, packed, seconds = browser.open(path, gzip_ok=True)
                times.append(seconds)
            try:
                plain = gzip.decompress(packed)
            except OSError:
                plain = packed
            rows.append(
                {
                    "path": path,
                    "status": status,
                    "kb": round(len(plain) / 1024, 1),
                    "gzip_kb": round(len(packed) / 1024, 1),
                    "p50_ms": round(1000 * percentile(times, 50)),
                    "p95_ms": round(1000 * percentile(times, 95)),
                }
            )
            row = rows[-1]
            flag = "  OVER 300 ms" if row["p95_ms"] > TARGET_MS else ""
            print(
                f"{path:<48} {status} {row['kb']:>7} KB ({row['gzip_kb']:>5} KB gzip) "
                f"p50 {row['p50_ms']:>5} ms p95 {row['p95_ms']:>5} ms{flag}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    login = {"p50_ms": round(1000 * percentile(logins, 50)), "p95_ms": round(1000 * percentile(logins, 95))}
    print(f"login POST: p50 {login['p50_ms']} ms, p95 {login['p95_ms']} ms over {len(logins)} fresh sessions")
    over = [r["path"] for r in rows if r["p95_ms"] > TARGET_MS]
    print(f"{len(over)} of {len(rows)} pages over {TARGET_MS} ms at p95" + (f": {', '.join(over)}" if over else ""))
    if args.json:
        Path(args.json).write_text(json.dumps({"login": login, "pages": rows}, indent=2))


if __name__ == "__main__":
    main()
