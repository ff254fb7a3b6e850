"""Security review 2026-11-29, points 1, 2 and 5, against the local stand-in chat server:
- a judge names only key variables the operator assigned to its owner or to everyone (JUDGE_KEY_VARIABLES);
- run errors carry the status and a short reason of RateLab's own, never the server's body; no
  user-info in the base URL; loopback and private targets only with JUDGE_ALLOW_PRIVATE_HOSTS, host
  names resolved, every address checked and the connections pinned to the checked one;
- a chunk stores each answer as it arrives: killed after k answers, its retry asks only the rest,
  and the usage row counts what was paid.
"""

import os
import signal
import socket
import threading
import time

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from config.env import env_assignments
from scoring.judges.client import JudgeRequestFailed
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage, MetricRun
from scoring.selectors.scores import metric_scores
from scoring.services.judges.registry import JudgeRefusal, base_url_problem
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records
from tests.scoring.chat_server import Scripted
from tests.scoring.judge_helpers import RECORDS, make_judge, scoring_server
from tests.scoring.test_judges_metric import expected_scores

FORM = {
    "name": "hosted",
    "model": "m",
    "template": "rating",
    "temperature": "0",
    "samples": "1",
    "max_tokens": "16",
    "concurrency": "8",
}


@pytest.fixture(autouse=True)
def quick(settings):
    settings.JUDGE_MAX_RETRIES = 0
    settings.JUDGE_TIMEOUT_SECONDS = 5


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="toy", owner=researcher)


# --- 1. key variables: only those the operator assigned --------------------------------------------


def test_the_setting_reads_owner_variable_pairs_and_a_malformed_value_fails_loudly(monkeypatch):
    monkeypatch.setenv("JUDGE_KEY_VARIABLES", " alice:ALICE_OPENAI_KEY, *:LAB_OPENAI_KEY ,alice:ALICE_OTHER_KEY")
    assert env_assignments("JUDGE_KEY_VARIABLES") == {
        "alice": ("ALICE_OPENAI_KEY", "ALICE_OTHER_KEY"),
        "*": ("LAB_OPENAI_KEY",),
    }
    monkeypatch.setenv("JUDGE_KEY_VARIABLES", "")
    assert env_assignments("JUDGE_KEY_VARIABLES") == {}
    monkeypatch.delenv("JUDGE_KEY_VARIABLES")
    assert env_assignments("JUDGE_KEY_VARIABLES") == {}
    for bad in ("ALICE_OPENAI_KEY", "alice=ALICE_KEY", "alice:", ":LAB_KEY", "alice:MY-KEY", "al ice:K_KEY"):
        monkeypatch.setenv("JUDGE_KEY_VARIABLES", bad)
        with pytest.raises(ImproperlyConfigured, match="is not OWNER:VARIABLE"):
            env_assignments("JUDGE_KEY_VARIABLES")


def test_a_judge_may_name_only_a_key_variable_assigned_to_its_owner_or_to_everyone(
    researcher, researcher_client, monkeypatch, settings
):
    monkeypatch.setenv("BOB_OPENAI_KEY", "sk-bob-private")
    monkeypatch.setenv("LAB_OPENAI_KEY", "sk-lab-shared")
    settings.JUDGE_KEY_VARIABLES = {"bob": ("BOB_OPENAI_KEY",), "*": ("LAB_OPENAI_KEY",)}
    url = reverse("scoring:judges")
    form = {**FORM, "base_url": "https://api.example.org/v1"}
    # another researcher's variable: refused on the form and by judge_add, nothing created
    page = researcher_client.post(url, {**form, "api_key_env": "BOB_OPENAI_KEY"}).content.decode()
    assert "BOB_OPENAI_KEY is not a key variable assigned to you" in page and "Yours: LAB_OPENAI_KEY." in page
    with pytest.raises(CommandError, match="BOB_OPENAI_KEY is not a key variable assigned to you"):
        call_command(
            "judge_add", "--name", "n", "--base-url", "https://api.example.org/v1", "--model", "m",
            "--api-key-env", "BOB_OPENAI_KEY", "--owner", researcher.username,
        )  # fmt: skip
    assert not Judge.objects.exists()
    # a variable nobody was assigned (the workers' own OPENAI_API_KEY, say): the same refusal
    page = researcher_client.post(url, {**form, "api_key_env": "OPENAI_API_KEY"}).content.decode()
    assert "OPENAI_API_KEY is not a key variable assigned to you" in page and not Judge.objects.exists()
    # the lab's, assigned to everyone: accepted, and the form lists what the researcher may use
    assert "The operator assigned you: LAB_OPENAI_KEY." in researcher_client.get(url).content.decode()
    assert researcher_client.post(url, {**form, "api_key_env": "LAB_OPENAI_KEY"}).status_code == 302
    assert Judge.objects.get().api_key_env == "LAB_OPENAI_KEY"
    # unset or empty setting: no key variable at all
    settings.JUDGE_KEY_VARIABLES = {}
    page = researcher_client.post(url, {**form, "name": "other", "api_key_env": "LAB_OPENAI_KEY"}).content.decode()
    assert "None is assigned to you." in page and Judge.objects.count() == 1


class _WatchedEnvironment(dict):
    """os.environ's values, noting every variable read through get() or []."""

    def __init__(self, values):
        super().__init__(values)
        self.read = []

    def get(self, key, default=None):
        self.read.append(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.append(key)
        return super().__getitem__(key)


def test_a_judge_whose_owner_lost_the_assignment_is_refused_by_the_worker_before_its_key_is_read(
    dataset, researcher, chat_server, monkeypatch, settings
):
    monkeypatch.setenv("ALICE_OPENAI_KEY", "sk-alice-private")
    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_OPENAI_KEY",)}
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server, api_key_env="ALICE_OPENAI_KEY")
    run = services.metrics_compute(dataset=dataset, metrics=["judge:local"], dispatch=False)
    settings.JUDGE_KEY_VARIABLES = {"bob": ("ALICE_OPENAI_KEY",)}  # the operator moved it to bob
    environment = _WatchedEnvironment(os.environ)
    monkeypatch.setattr(os, "environ", environment)
    with pytest.raises(JudgeRefusal, match="ALICE_OPENAI_KEY is not a key variable assigned to you"):
        services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert not chat_server.requests and "ALICE_OPENAI_KEY" not in environment.read


def test_the_judges_pages_tell_nothing_about_variables_not_assigned_to_the_viewer(
    researcher, researcher_client, chat_server, monkeypatch, settings
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-lab-shared")
    monkeypatch.setenv("LAB_OPENAI_KEY", "sk-lab")
    settings.JUDGE_KEY_VARIABLES = {"*": ("LAB_OPENAI_KEY",)}
    # stored before the rule (or by the admin): names a variable not assigned to alice
    probe = make_judge(researcher, chat_server, name="probe", api_key_env="OPENAI_API_KEY")
    mine = make_judge(researcher, chat_server, name="mine", api_key_env="LAB_OPENAI_KEY")
    for url in (reverse("scoring:judges"), reverse("scoring:judge_detail", args=[probe.pk])):
        page = researcher_client.get(url).content.decode()
        assert "$OPENAI_API_KEY is set" not in page and "$OPENAI_API_KEY is NOT set" not in page
        assert "$OPENAI_API_KEY is refused" in page and "sk-lab" not in page
    monkeypatch.delenv("OPENAI_API_KEY")  # whether it exists changes nothing on the page
    assert "$OPENAI_API_KEY is refused" in researcher_client.get(reverse("scoring:judges")).content.decode()
    # the researcher's own assigned variable: the page may say whether it is set
    page = researcher_client.get(reverse("scoring:judge_detail", args=[mine.pk])).content.decode()
    assert "$LAB_OPENAI_KEY is set" in page


# --- 2. targets and errors ----------------------------------------------------------------------------


def test_a_run_error_carries_the_status_and_never_the_servers_body(
    dataset, researcher, researcher_client, chat_server, django_capture_on_commit_callbacks
):
    chat_server.answer = lambda body, n: Scripted(403, reply="INTERNAL-SECRET-7f3a9c redis-pass=hunter2")
    make_judge(researcher, chat_server, name="internal", concurrency=1)
    with pytest.raises(JudgeRequestFailed), django_capture_on_commit_callbacks(execute=True):  # eager: raised here
        researcher_client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["judge:internal"]})
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED and chat_server.requests
    assert f"first failure: {chat_server.base_url} answered HTTP 403 Forbidden." in run.error
    pages = [
        run.error,
        researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).content.decode(),
        researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode(),
        researcher_client.get(reverse("scoring:judge_detail", args=[Judge.objects.get().pk])).content.decode(),
    ]
    assert all("HTTP 403 Forbidden" in page for page in pages)
    assert not any("INTERNAL-SECRET" in page or "hunter2" in page or "Error code" in page for page in pages)


def test_user_info_in_the_base_url_is_refused_when_added_and_by_the_worker(
    dataset, researcher, researcher_client, chat_server
):
    with_user = chat_server.base_url.replace("http://", "http://guest:guest@")
    page = researcher_client.post(reverse("scoring:judges"), {**FORM, "base_url": with_user}).content.decode()
    assert "without a user name or password" in page and not Judge.objects.exists()
    with pytest.raises(CommandError, match="without a user name or password"):
        call_command(
            "judge_add", "--name", "n", "--base-url", with_user, "--model", "m", "--owner", researcher.username
        )  # fmt: skip
    Judge.objects.create(owner=researcher, name="old", base_url=with_user, model="m")  # stored before the rule
    with pytest.raises(KeyError, match="without a user name or password"):
        services.metrics_compute(dataset=dataset, metrics=["judge:old"])
    run = MetricRun.objects.create(dataset=dataset, metrics=["judge:old"], total_chunks=1)
    chunk = run.chunks.create(index=0, response_ids=list(dataset_response_ids(dataset)))
    with pytest.raises(JudgeRefusal, match="without a user name or password"):
        services_metric_chunks.metric_chunk_compute(chunk=chunk)
    assert not chat_server.requests


def dataset_response_ids(dataset):
    from annotation.models import Response

    return Response.objects.filter(context__dataset=dataset).values_list("pk", flat=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://127.1.2.3/v1",
        "http://localhost:8000/v1",
        "http://judge.localhost/v1",
        "http://[::1]:8000/v1",
        "http://10.0.0.7/v1",
        "http://172.16.5.4/v1",
        "http://192.168.1.10/v1",
        "http://[fd12:3456::1]/v1",
        "http://100.64.0.1/v1",
        "http://0.0.0.0:8000/v1",
        "http://[::ffff:10.0.0.7]/v1",
    ],
)
def test_loopback_private_and_other_non_global_targets_need_the_operators_opt_in(url, settings):
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = False
    assert "JUDGE_ALLOW_PRIVATE_HOSTS=1" in base_url_problem(url)
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    assert base_url_problem(url) == ""


def test_link_local_targets_are_refused_even_with_the_opt_in_and_public_ones_pass(settings):
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    for url in ("http://169.254.169.254/latest", "http://[::ffff:169.254.169.254]/", "http://[fe80::1]/v1"):
        assert "link-local" in base_url_problem(url)
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = False
    for url in ("https://8.8.8.8/v1", "https://api.example.org/v1"):  # names are checked when resolved
        assert base_url_problem(url) == ""


def test_an_existing_judge_on_loopback_is_refused_by_the_worker_without_the_opt_in(
    dataset, researcher, chat_server, settings
):
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server)  # added while the operator allowed it
    run = services.metrics_compute(dataset=dataset, metrics=["judge:local"], dispatch=False)
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = False
    with pytest.raises(JudgeRefusal, match=r"127\.0\.0\.1 is a loopback address: judges may use such addresses only"):
        services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert not chat_server.requests


@pytest.fixture
def resolver(monkeypatch):
    """getaddrinfo answering for *.example.test from `resolver.answers` (a list per lookup, the last
    repeated), every lookup of such a name recorded; other names resolve as usual."""
    real = socket.getaddrinfo

    class Resolver:
        answers = [["127.0.0.1"]]
        lookups = []

        def __call__(self, host, port, *args, **kwargs):
            if not str(host).endswith(".example.test"):
                return real(host, port, *args, **kwargs)
            self.lookups.append(host)
            addresses = self.answers[min(len(self.lookups), len(self.answers)) - 1]
            family = {4: socket.AF_INET, 6: socket.AF_INET6}
            return [(family[6 if ":" in a else 4], socket.SOCK_STREAM, 6, "", (a, int(port or 80))) for a in addresses]

    fake = Resolver()
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


def test_a_name_is_resolved_once_every_address_checked_and_the_requests_go_to_the_checked_address(
    dataset, researcher, chat_server, resolver, settings
):
    chat_server.answer = scoring_server
    port = chat_server.base_url.split(":")[2].split("/")[0]
    Judge.objects.create(owner=researcher, name="named", base_url=f"http://judge.example.test:{port}/v1", model="m")
    # first lookup 127.0.0.1 (checked), every later one an unroutable address (DNS rebinding)
    resolver.answers = [["127.0.0.1"], ["10.255.255.1"]]
    run = services.metrics_compute(dataset=dataset, metrics=["judge:named"], dispatch=False)
    services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert resolver.lookups == ["judge.example.test"]  # once: the connections used the checked address
    assert len(chat_server.requests) == 12 and set(chat_server.host_headers) == {f"judge.example.test:{port}"}
    assert metric_scores(dataset=dataset)["judge:named"] == expected_scores(dataset)


@pytest.mark.parametrize(
    "case",
    [
        (["127.0.0.1"], r"judge\.example\.test is a loopback address \(127\.0\.0\.1\)"),
        (["93.184.215.14", "10.1.2.3"], r"judge\.example\.test is a private or reserved address \(10\.1\.2\.3\)"),
        (["169.254.169.254"], "link-local"),
    ],
)
def test_a_name_resolving_to_any_refused_address_is_refused_before_any_request(
    dataset, chat_server, resolver, settings, case
):
    addresses, message = case
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = False
    resolver.answers = [addresses]
    Judge.objects.create(owner=dataset.owner, name="named", base_url="http://judge.example.test/v1", model="m")
    run = services.metrics_compute(dataset=dataset, metrics=["judge:named"], dispatch=False)
    with pytest.raises(JudgeRefusal, match=message):
        services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert not chat_server.requests and not JudgeCacheEntry.objects.exists()


# --- 5. answers stored as they arrive -------------------------------------------------------------------


class Killed(BaseException):  # BaseException: nothing in the chunk's code may catch it
    """The worker process killed (SIGKILL) in the middle of a chunk, here a signal to the test's thread."""


def _raise_killed(signum, frame):
    raise Killed


def _usage_requests(judge_id):
    """The requests counted so far, read from the server's thread (its own database connection)."""
    try:
        return sum(JudgeUsage.objects.filter(judge_id=judge_id).values_list("requests", flat=True))
    except Exception:  # a table locked by the writer at that moment: try again
        return -1
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_chunk_killed_after_k_answers_is_retried_asking_only_the_missing_prompts_and_the_usage_adds_up(
    researcher, chat_server, settings
):
    settings.JUDGE_TIMEOUT_SECONDS = 60  # the request held at the kill must not time out first
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    k = 5
    judge = make_judge(researcher, chat_server, concurrency=1)
    assert threading.get_ident() == threading.main_thread().ident  # signals go to the main thread

    def kill_after_k(body, nth):
        if nth == k + 1 and not killed.is_set():
            # the (k+1)th request: once the k answers are stored (or after a while, for code that
            # stores nothing before the end), kill the chunk while this request is in flight
            deadline = time.monotonic() + 3
            while _usage_requests(judge.pk) < k and time.monotonic() < deadline:
                time.sleep(0.05)
            if armed.is_set():  # the test's handler is still in place
                killed.set()
                os.kill(os.getpid(), signal.SIGUSR1)
        return scoring_server(body, nth)

    killed, armed = threading.Event(), threading.Event()
    chat_server.answer = kill_after_k
    previous = signal.signal(signal.SIGUSR1, _raise_killed)
    run = services.metrics_compute(dataset=dataset, metrics=["judge:local"], dispatch=False)
    chunk = run.chunks.get()
    armed.set()
    try:
        with pytest.raises(Killed):
            services_metric_chunks.metric_chunk_compute(chunk=chunk)
    finally:
        armed.clear()
        signal.signal(signal.SIGUSR1, previous)
    # the killed chunk kept the k answers it had received, and counted them as paid
    assert killed.is_set() and JudgeCacheEntry.objects.count() == k
    usage = JudgeUsage.objects.get(run=run)
    assert (usage.prompts, usage.cached, usage.requests) == (k, 0, k)
    sent_before = len(chat_server.requests)
    # the (k+1)th was in flight when the worker died (paid, and lost with it); a (k+2)th only if its
    # request started in the instant between the kill and the stop it sets
    assert sent_before in (k + 1, k + 2)
    # the redelivered chunk asks only the prompts without an answer
    chat_server.answer = scoring_server
    services_metric_chunks.metric_chunk_compute(chunk=chunk)
    retried = chat_server.users()[sent_before:]
    assert len(retried) == 12 - k and len(set(retried)) == 12 - k
    assert metric_scores(dataset=dataset)["judge:local"] == expected_scores(dataset)
    usage.refresh_from_db()
    entries = list(JudgeCacheEntry.objects.all())
    # prompts answered = from the cache + answered by requests, over both attempts
    assert (usage.prompts, usage.cached, usage.requests) == (k + 12, k, 12)
    assert usage.prompt_tokens == sum(e.prompt_tokens for e in entries)
    assert usage.completion_tokens == sum(e.completion_tokens for e in entries)


def test_the_system_check_names_an_assigned_variable_no_judge_may_read(settings):
    from scoring.checks import check_judge_key_variables

    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_OPENAI_KEY",), "*": ("DJANGO_SECRET_KEY",)}
    (error,) = check_judge_key_variables(None)
    assert error.id == "scoring.E001" and "DJANGO_SECRET_KEY (to *)" in error.msg
    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_OPENAI_KEY",), "*": ("LAB_OPENAI_KEY",)}
    assert check_judge_key_variables(None) == []
