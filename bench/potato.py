"""Potato (potato-annotation on PyPI) beside RateLab in bench/bench_annotators.py (`--system potato`).

Potato runs from its own virtual environment (`--potato-venv`, never this project's), as its Docker
entrypoint runs it: gunicorn, one worker (Potato keeps its state in one process) with
`--potato-threads` threads, the WSGI factory `potato.flask_server:create_app('config.yaml')`. The
task: one 1-5 Likert question ("overall") on one reply per page, three annotators per item, no
password, as close to a RateLab survey with one context and one reply per task as Potato's
configuration allows.

Each simulated annotator logs in once (POST /auth), then per rating sends Potato's minimal request
set: the save (POST /updateinstance, JSON, as its page's script sends it) and "Next" (POST /annotate
action=next_instance, which answers with the next item's page). Ratings stored, lost and doubled are
counted from the user-state files Potato writes, after its server has stopped (it writes them on
every save and at exit).
"""

import http.cookiejar
import json
import os
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

INSTANCE_RE = re.compile(r'name="instance_id" type="hidden" value="([^"]+)"')

CONFIG = """annotation_task_name: "Bench: rate replies"
data_files:
  - data.jsonl
item_properties:
  id_key: id
  text_key: text
task_dir: .
output_annotation_dir: annotation_output
export_annotation_format: jsonl
require_password: false
max_annotations_per_item: {assignments}
annotation_schemes:
  - annotation_type: likert
    name: overall
    description: "How appropriate is this response to the conversation?"
    min_label: "bad"
    max_label: "good"
    size: 5
user_config:
  allow_all_users: true
"""


def write_task(folder, n_items, assignments):
    """A Potato task folder: config.yaml and `n_items` conversations with one reply each."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(CONFIG.format(assignments=assignments))
    with (folder / "data.jsonl").open("w") as out:
        for i in range(n_items):
            out.write(json.dumps({"id": f"c{i}", "text": f"A: turn {i}\nB: reply {i} of the system"}) + "\n")
    return folder


def start_server(venv, folder, port, threads):
    command = [
        str(Path(venv) / "bin" / "gunicorn"),
        "--workers",
        "1",
        "--threads",
        str(threads),
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        "potato.flask_server:create_app('config.yaml')",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "DATABASE_URL", "SECRET_KEY"))}
    env.update(POTATO_SECRET_KEY=secrets.token_hex(32), POTATO_NONINTERACTIVE="1", HOME=str(folder))
    log = (Path(folder) / "server.log").open("w")
    return subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)


def stored_counts(folder):
    """(stored, doubled, per-user stored) from Potato's user-state files: one value per item and question."""
    stored, doubled, per_user = 0, 0, {}
    for path in (Path(folder) / "annotation_output").glob("*/user_state.json"):
        state = json.loads(path.read_text())
        labels = state.get("instance_id_to_label_to_value") or {}
        mine = 0
        for values in labels.values():
            answers = [value for value in values if value[0].get("schema") == "overall"]
            mine += min(len(answers), 1)
            doubled += max(len(answers) - 1, 0)
        per_user[state.get("user_id")] = mine
        stored += mine
    return stored, doubled, per_user


class PotatoAnnotator:
    """One annotator of a Potato task over HTTP (urllib, its own cookie jar), like LiveAnnotator."""

    def __init__(self, base_url, worker_id, timeout=60):
        self.base_url = base_url.rstrip("/")
        self.worker_id = worker_id
        self.timeout = timeout
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.page_times, self.submit_times = [], []
        self.tokens = []  # the items this annotator saved (Potato's instance ids)
        self.answered = 0
        self.instance = None
        self.logged_in = False

    def _open(self, path, data=None, payload=None):
        headers = {}
        if payload is not None:
            body, headers = json.dumps(payload).encode(), {"Content-Type": "application/json"}
        else:
            body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base_url + path, data=body, headers=headers)
        started = time.perf_counter()
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                return response.status, response.read().decode(), time.perf_counter() - started
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), time.perf_counter() - started

    def do_hit(self, replay=False, score=3, think=0.0):
        """Log in the first time; then save one rating and press Next. False when no item is left."""
        if not self.logged_in:
            status, html, _ = self._open("/auth", {"action": "login", "email": self.worker_id, "pass": ""})
            if status != 200:
                raise RuntimeError(f"{self.worker_id}: login answered {status}")
            self.logged_in = True
            found = INSTANCE_RE.search(html)
            self.instance = found.group(1) if found else None
        if self.instance is None:
            return False
        if think:
            time.sleep(think)
        answer = {f"overall:{score}": str(score)}
        payload = {"instance_id": self.instance, "annotations": answer, "span_annotations": []}
        status, body, seconds = self._open("/updateinstance", payload=payload)
        self.submit_times.append(seconds)
        if status != 200 or json.loads(body).get("status") != "success":
            raise RuntimeError(f"{self.worker_id}: save answered {status}: {body[:200]}")
        self.tokens.append(self.instance)
        self.answered += 1
        status, html, seconds = self._open("/annotate", {"action": "next_instance"})
        self.page_times.append(seconds)
        if status != 200:
            raise RuntimeError(f"{self.worker_id}: next page answered {status}")
        found = INSTANCE_RE.search(html)
        self.instance = found.group(1) if found else None
        return True
