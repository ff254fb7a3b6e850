"""Shared test fixtures: named users who must not see each other's data, and the shared data folder."""

import os
import shutil
import threading
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core import signals
from django.core.cache import cache
from django.db import connections

from config.celery import app as celery_app
from config.runtime import background

SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
PASSWORD = "correct-horse-battery-staple"
# Debian's chromium, driven by Playwright (`playwright install` cannot download browsers here).
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# No metric-model warm-up thread in the test process or the workers it starts (config/runtime/warmup.py):
# a test loads a model when it scores with it; tests/test_warmup_models.py turns it on itself.
os.environ.setdefault("RATELAB_WARM_MODELS", "0")


def _user(username, **extra):
    return get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)


@pytest.fixture
def researcher(db):
    """Owns the study under test."""
    return _user("alice")


@pytest.fixture
def other_researcher(db):
    """Has studies of her own and must never see alice's."""
    return _user("bob")


@pytest.fixture
def outsider(db):
    """A logged-in account with no studies: must see nothing."""
    return _user("mallory")


@pytest.fixture
def admin_user(db):
    return _user("root", is_staff=True, is_superuser=True)


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def shared_data():
    """The folder of public human-judgement data beside the checkout; skips when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Creating users with the production hasher costs about a second each on a busy machine."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def judges_on_local_stand_ins(settings):
    """The judge tests' stand-in servers listen on 127.0.0.1: the operator's opt-in, as `make demo`
    sets it. Tests of the refusal set it back to False."""
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True


@pytest.fixture(autouse=True)
def celery_in_process_unless_worker(request, settings):
    """Tasks run in-process, as in the embedded default, even when CI sets CELERY_BROKER_URL.

    Only tests marked `worker` talk to the real broker (and start a real worker); the rest
    would otherwise queue tasks that no worker ever runs. The configuration is restored after
    each test, so no test leaks eager mode into another.
    """
    real_broker = request.node.get_closest_marker("worker") is not None
    conf = celery_app.conf
    before = (conf.task_always_eager, conf.task_eager_propagates)
    conf.task_always_eager = not real_broker
    conf.task_eager_propagates = True
    settings.CELERY_TASK_ALWAYS_EAGER = not real_broker
    yield
    conf.task_always_eager, conf.task_eager_propagates = before


@pytest.fixture
def embedded_background(monkeypatch):
    """The embedded web process's background pool (config/runtime/background.py), switched on for one test.

    Tasks the test's requests queue run on the pool's threads; the test waits for them with the
    `drain()` this fixture yields, and any still running at its end are waited for before the
    database is torn down. Without this fixture tests keep Celery's eager, in-request behaviour.

    A queued task starts only once the test client's request has finished. The tests' in-memory
    SQLite uses a shared cache, where a write beside another thread's read fails at once ("table is
    locked") instead of waiting as it does on the embedded mode's WAL file; without this, the pool's
    first write raced the rest of the request (1 CI run in a few).
    """
    no_request = threading.Event()
    no_request.set()

    def request_began(**kwargs):
        no_request.clear()

    def request_ended(**kwargs):
        no_request.set()

    run_task = background._run

    def run_after_the_request(task, args, kwargs):
        no_request.wait(60)
        run_task(task, args, kwargs)

    signals.request_started.connect(request_began, dispatch_uid="embedded-background-test")
    signals.request_finished.connect(request_ended, dispatch_uid="embedded-background-test")
    monkeypatch.setattr(background, "_run", run_after_the_request)
    background.serve_in_background(True)
    try:
        yield background.drain
    finally:
        background.serve_in_background(False)
        background.drain()
        signals.request_started.disconnect(dispatch_uid="embedded-background-test")
        signals.request_finished.disconnect(dispatch_uid="embedded-background-test")


@pytest.fixture
def browser(monkeypatch):
    """Headless Chromium through Playwright's sync API, for the page tests (one per test)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls stay synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # The test's ORM calls while Playwright runs leave a connection pytest-django's teardown
        # does not close; on PostgreSQL it kept the test database from being dropped at the end.
        connections.close_all()


@pytest.fixture
def fresh_cache():
    """An empty cache before and after: debounce keys and cached pages live in the cache, which
    outlives a test's database (`pytest.mark.usefixtures("fresh_cache")`)."""
    cache.clear()
    yield
    cache.clear()
