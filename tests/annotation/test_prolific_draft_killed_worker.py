"""A real process launching a Prolific survey is killed (SIGKILL) while its create-draft POST waits
for Prolific's answer; the next launch adopts that draft, and Prolific holds one draft, not two.

Prolific is bench/prolific_server.py (its documented calls, state in memory), holding its answer to
`POST studies/` until the test has killed the process that sent it. The launch runs in a child
process (`manage.py shell`) on the same PostgreSQL database, so what it committed before the POST
stays and its open transaction dies with it, as a worker's would. Needs PostgreSQL:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_x \
        pytest tests/annotation/test_prolific_draft_killed_worker.py
"""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

from annotation import services
from annotation.models import ProlificStudy, Survey
from bench.prolific_server import Handler, ProlificState
from tests.annotation.prolific_helpers import PUBLIC_BASE_URL, make_prolific_survey

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "bench-token-not-a-secret"
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("a second process shares the database only on PostgreSQL (DATABASE_URL=postgres://...)")


class HeldCreate(Handler):
    """Prolific makes the draft, then keeps its answer until `release` is set."""

    release = threading.Event()

    def _send(self, status, body=None):
        if self.command == "POST" and self.path.rstrip("/").endswith("/studies") and status == 201:
            self.release.wait(60)
        with contextlib.suppress(OSError):  # the caller is gone: nobody reads the answer
            super()._send(status, body)


@pytest.fixture
def prolific(monkeypatch, settings):
    state = ProlificState(TOKEN)
    handler = type("Held", (HeldCreate,), {"state": state, "release": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api/v1/"
    monkeypatch.setenv("PROLIFIC_API_TOKEN", TOKEN)
    settings.PROLIFIC_API_URL, settings.PUBLIC_BASE_URL, settings.PROLIFIC_WORKSPACE_ID = url, PUBLIC_BASE_URL, ""
    yield url, state, handler.release
    handler.release.set()
    server.shutdown()


def launch_in_a_child(survey, url):
    database = django_settings.DATABASES["default"]
    host = f"{database.get('HOST') or '127.0.0.1'}:{database.get('PORT') or 5432}"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{database.get('USER') or 'postgres'}@{host}/{database['NAME']}",
        "PROLIFIC_API_URL": url,
        "PROLIFIC_API_TOKEN": TOKEN,
        "PUBLIC_BASE_URL": PUBLIC_BASE_URL,
        "PROLIFIC_WORKSPACE_ID": "",
    }
    code = (
        "from annotation import services; from annotation.models import Survey; "
        f"services.survey_launch(survey=Survey.objects.get(pk={survey.pk}))"
    )
    return subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_a_launch_killed_mid_create_is_followed_by_a_launch_that_adopts_its_draft(researcher, prolific):
    url, state, release = prolific
    survey = make_prolific_survey(researcher, name="killed-mid-create")
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    child = launch_in_a_child(survey, url)
    deadline = time.monotonic() + 90
    while not state.studies:  # Prolific has made the draft and holds its answer
        assert child.poll() is None, child.stdout.read().decode(errors="replace")[-3000:]
        assert time.monotonic() < deadline, "the child never sent its create"
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(30)
    release.set()

    row = ProlificStudy.objects.get(survey=survey)
    assert (row.study_id, row.draft_attempts) == ("", 1)  # nothing recorded but the attempt
    survey.refresh_from_db()
    services.survey_launch(survey=survey)

    ours = [s for s in state.studies.values() if s["internal_name"].startswith(f"RateLab survey {survey.pk} (")]
    assert len(ours) == 1, "the relaunch made a second draft"
    row.refresh_from_db()
    assert (row.study_id, row.status) == (ours[0]["id"], "ACTIVE")
    creates = [request for request in state.requests if request == ("POST", "studies")]
    assert len(creates) == 1 and ("GET", "studies") in state.requests


def test_a_launch_waiting_while_another_is_killed_mid_create_adopts_the_killed_ones_draft(researcher, prolific):
    url, state, release = prolific
    survey = make_prolific_survey(researcher, name="killed-while-another-waits")
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    child = launch_in_a_child(survey, url)
    deadline = time.monotonic() + 90
    while not state.studies:
        assert child.poll() is None, child.stdout.read().decode(errors="replace")[-3000:]
        assert time.monotonic() < deadline, "the child never sent its create"
        time.sleep(0.05)
    # A second launch (a double click, a second tab) waits for the row the child holds while its
    # POST is in flight (its count, an UPDATE of that row, waits too).
    outcome = {}

    def second_launch():
        try:
            outcome["survey"] = services.survey_launch(survey=Survey.objects.get(pk=survey.pk))
        except Exception as error:  # reported by the assertion below
            outcome["error"] = error
        finally:
            connection.close()

    waiting = threading.Thread(target=second_launch)
    waiting.start()
    time.sleep(1)
    assert waiting.is_alive() and child.poll() is None  # both still at it: one waits, one is in flight
    assert [r for r in state.requests if r == ("POST", "studies")] == [("POST", "studies")]
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(30)
    release.set()
    waiting.join(60)

    assert "error" not in outcome, outcome.get("error")
    ours = [s for s in state.studies.values() if s["internal_name"].startswith(f"RateLab survey {survey.pk} (")]
    assert len(ours) == 1, "the waiting launch made a second draft"
    assert ProlificStudy.objects.get(survey=survey).study_id == ours[0]["id"]
