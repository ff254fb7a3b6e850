"""Peak memory of a gunicorn worker receiving a large dataset upload.

    .venv/bin/python bench/bench_upload_limit.py --size-mb 105 --limit-mb 100 [--root OTHER_CHECKOUT]

Starts `gunicorn config.wsgi` (one sync worker) from `--root` (default: this checkout) on a
throw-away SQLite database, logs in, posts a valid JSONL dataset of `--size-mb` MB (one context
whose response is one long line, as in the security review) to /datasets/upload/, and prints
the worker's peak resident memory (VmHWM) before and after, the answer and the time it took.
`--root` lets the same measurement run against an older checkout (without the limit).
"""

import argparse
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER, PASSWORD = "bench", "bench-password-123"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=105)
    parser.add_argument("--limit-mb", type=int, default=100)
    parser.add_argument(
        "--shape",
        choices=("one-line", "many-lines"),
        default="one-line",
        help="one context with one huge response (the review's file), or contexts of about 1 KB each",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to serve (default: this one)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
            "UPLOAD_MAX_MB": str(args.limit_mb),
            "DJANGO_DEBUG": "1",
            "PYTHONPATH": str(args.root),
        }
        python = str(ROOT / ".venv" / "bin" / "python")
        manage = [python, str(args.root / "manage.py")]
        subprocess.run([*manage, "migrate", "--verbosity", "0"], env=env, check=True, cwd=args.root)
        create_user = (
            "from django.contrib.auth import get_user_model; "
            f"get_user_model().objects.create_user({USER!r}, password={PASSWORD!r})"
        )
        subprocess.run([*manage, "shell", "-c", create_user], env=env, check=True, cwd=args.root)
        body_path = tmp / "upload.body"
        boundary = f"bench{secrets.token_hex(8)}"
        port = _free_port()
        server = subprocess.Popen(
            [
                str(ROOT / ".venv" / "bin" / "gunicorn"),
                "config.wsgi",
                "--workers",
                "1",
                "--timeout",
                "600",
                "--bind",
                f"127.0.0.1:{port}",
                "--log-level",
                "warning",
            ],
            env=env,
            cwd=args.root,
        )
        try:
            worker = _wait_for_worker(server.pid, port)
            session = _Session(port)
            session.login()
            token = session.csrf_token("/datasets/upload/")
            _write_body(body_path, boundary, token, args.size_mb, args.shape)
            before = _peak_mb(worker)
            started = time.perf_counter()
            status, page = session.post_file("/datasets/upload/", body_path, boundary)
            elapsed = time.perf_counter() - started
            after = _peak_mb(worker)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
    outcome = "accepted (redirect)" if status == 302 else _error_text(page) or f"HTTP {status}"
    print(f"served from: {args.root}")
    print(f"upload: {args.size_mb:.0f} MB JSONL ({args.shape}), UPLOAD_MAX_MB={args.limit_mb}")
    print(f"answer: HTTP {status} in {elapsed:.1f} s: {outcome}")
    print(f"worker peak RSS (VmHWM): before {before:.0f} MB, after {after:.0f} MB (+{after - before:.0f} MB)")


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_worker(master, port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
        if children:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return int(children[0])
            except OSError:
                pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not start")


def _peak_mb(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def _write_body(path, boundary, token, size_mb, shape):
    """A multipart body: the form's fields and a JSONL file of `size_mb` MB in the given shape."""
    text_bytes = int(size_mb * 1024 * 1024)
    head = json.dumps({"context_id": "c1", "context": ["hello"], "responses": [{"system": "s", "text": ""}]})
    prefix, suffix = head.split('"text": ""')
    with path.open("wb") as out:
        for name, value in (("csrfmiddlewaretoken", token), ("name", "big"), ("format", ""), ("description", "")):
            out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        out.write(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jsonl"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
        )
        if shape == "many-lines":
            _write_many_contexts(out, text_bytes)
        else:
            out.write(f'{prefix}"text": "'.encode())
            block = b"lorem ipsum " * 87381  # about 1 MB
            written = 0
            while written < text_bytes:
                piece = block[: text_bytes - written]
                out.write(piece)
                written += len(piece)
            out.write(f'"{suffix}\n'.encode())
        out.write(f"\r\n--{boundary}--\r\n".encode())


def _write_many_contexts(out, total):
    written, number = 0, 0
    while written < total:
        line = (
            json.dumps(
                {
                    "context_id": f"c{number}",
                    "context": ["how was your day " * 10, "fine thanks " * 10],
                    "references": ["good to hear " * 10],
                    "responses": [{"system": f"sys{k}", "text": "i do not know " * 8} for k in range(4)],
                }
            ).encode()
            + b"\n"
        )
        out.write(line)
        written += len(line)
        number += 1


def _error_text(page):
    match = re.search(r'<ul class="errorlist"[^>]*>(.*?)</ul>', page, re.S)
    return re.sub(r"<[^>]+>", " ", match.group(1)).strip()[:200] if match else ""


class _Session:
    """Just enough of a browser: cookies, the CSRF token, form posts."""

    def __init__(self, port):
        self.port = port
        self.cookies = {}

    def _request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {**(headers or {}), "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        headers.setdefault("Referer", f"http://127.0.0.1:{self.port}{path}")
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";")[0]
        page = response.read().decode("utf-8", "replace")
        connection.close()
        return response.status, page

    def csrf_token(self, path):
        _, page = self._request("GET", path)
        return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

    def login(self):
        token = self.csrf_token("/accounts/login/")
        form = urllib.parse.urlencode({"username": USER, "password": PASSWORD, "csrfmiddlewaretoken": token})
        status, _ = self._request(
            "POST", "/accounts/login/", form, {"Content-Type": "application/x-www-form-urlencoded"}
        )
        if status != 302:
            raise SystemExit(f"login failed: HTTP {status}")

    def post_file(self, path, body_path, boundary):
        with body_path.open("rb") as body:
            headers = {
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Content-Length": str(body_path.stat().st_size),
            }
            return self._request("POST", path, body, headers)


if __name__ == "__main__":
    sys.exit(main())
