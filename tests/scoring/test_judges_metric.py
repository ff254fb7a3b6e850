"""The metric judge:<name>: computed in chunks like every metric, against a real local chat server."""

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Response
from config.celery import app as celery_app
from scoring.judges import prompts
from scoring.judges.client import JudgeRequestFailed
from scoring.models import Judge, JudgeCacheEntry, JudgeUsage, MetricRun, MetricScore
from scoring.selectors.scores import metric_scores
from scoring.services.judges.registry import base_url_problem
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records
from tests.scoring.chat_server import ChatServer, Scripted
from tests.scoring.judge_helpers import RECORDS, make_judge, score_for, scoring_server

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def eager(monkeypatch, settings):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    settings.JUDGE_MAX_RETRIES = 1
    settings.JUDGE_TIMEOUT_SECONDS = 5.0
    # the operator's assignment of the key variables these tests name (JUDGE_KEY_VARIABLES)
    settings.JUDGE_KEY_VARIABLES = {"*": ("RATELAB_TEST_JUDGE_KEY", "RATELAB_TEST_UNSET_KEY")}


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="toy", owner=researcher)


@pytest.fixture
def judge(researcher, chat_server):
    chat_server.answer = scoring_server
    return make_judge(researcher, chat_server)


def expected_scores(dataset, template_name=prompts.RATING):
    """Each response's prompt rendered afresh from the database, and the score the server gives it."""
    template = prompts.get_template(template_name)
    expected = {}
    for response in Response.objects.filter(context__dataset=dataset).select_related("context"):
        refs = [r.text for r in response.context.references.all()]
        if template_name == prompts.RATING_WITH_REFERENCE and not refs:
            expected[response.pk] = None
            continue
        messages = prompts.rating_messages(
            template, context=response.context.turns, response=response.text, reference=refs[0] if refs else ""
        )
        expected[response.pk] = float(score_for(messages[-1]["content"]))
    return expected


def test_compute_metrics_stores_one_score_per_response_as_the_server_answered_its_prompt(dataset, judge, chat_server):
    call_command("compute_metrics", "--dataset", "toy", "--metric", "judge:local", "--chunk-size", "5", "--no-progress")
    run = MetricRun.objects.get()
    assert (run.status, run.total_chunks, run.done_chunks) == (MetricRun.Status.DONE, 3, 3)
    assert metric_scores(dataset=dataset)["judge:local"] == expected_scores(dataset)
    assert len(chat_server.requests) == 12
    usage = JudgeUsage.objects.get(run=run)
    assert (usage.prompts, usage.cached, usage.requests, usage.unparseable) == (12, 0, 12, 0)
    assert usage.prompt_tokens == sum(len(u.split()) for u in chat_server.users())
    assert usage.completion_tokens == 24 and usage.cost is None
    version = MetricScore.objects.values_list("version", flat=True).distinct().get()
    assert version.startswith("rating@1/")


def test_a_rerun_is_answered_from_the_cache_without_a_request(compute, dataset, judge, chat_server):
    compute(dataset=dataset, metrics=["judge:local"])
    asked = len(chat_server.requests)
    MetricScore.objects.all().delete()
    compute(dataset=dataset, metrics=["judge:local"], force=True)
    assert len(chat_server.requests) == asked == 12
    assert metric_scores(dataset=dataset)["judge:local"] == expected_scores(dataset)
    latest = JudgeUsage.objects.first()
    assert (latest.prompts, latest.cached, latest.requests) == (12, 12, 0)
    assert JudgeCacheEntry.objects.count() == 12


def test_samples_are_averaged_and_their_spread_kept_in_the_cache(compute, dataset, researcher, chat_server):
    chat_server.answer = lambda body, n: "Score: 2" if n % 2 else "Score: 4"
    make_judge(researcher, chat_server, name="sampled", samples=2, concurrency=1)
    compute(dataset=dataset, metrics=["judge:sampled"])
    assert set(metric_scores(dataset=dataset)["judge:sampled"].values()) == {3.0}
    assert len(chat_server.requests) == 24
    assert set(JudgeCacheEntry.objects.values_list("spread", flat=True)) == {1.0}


def test_unparseable_replies_are_stored_undefined_counted_and_shown_with_an_example(
    compute, dataset, judge, chat_server, researcher_client
):
    chat_server.answer = lambda body, n: (
        "I would rather not say." if "nothing" in body["messages"][-1]["content"] else "Score: 5"
    )
    run = compute(dataset=dataset, metrics=["judge:local"])
    stored = metric_scores(dataset=dataset)["judge:local"]
    silent = set(Response.objects.filter(text="nothing").values_list("pk", flat=True))
    assert {pk for pk, value in stored.items() if value is None} == silent and len(silent) == 2
    assert {v for pk, v in stored.items() if pk not in silent} == {5.0}
    usage = JudgeUsage.objects.get(run=run)
    assert usage.unparseable == 2 and usage.unparseable_example == "I would rather not say."
    page = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert "2 samples gave no score" in page and "I would rather not say." in page


def test_the_reference_template_leaves_responses_without_a_reference_undefined(
    compute, dataset, researcher, chat_server
):
    chat_server.answer = scoring_server
    make_judge(researcher, chat_server, name="ref", template=prompts.RATING_WITH_REFERENCE)
    compute(dataset=dataset, metrics=["judge:ref"])
    assert metric_scores(dataset=dataset)["judge:ref"] == expected_scores(dataset, prompts.RATING_WITH_REFERENCE)
    assert len(chat_server.requests) == 10  # the context without reference asked nothing


def test_a_missing_api_key_variable_is_refused_before_any_request_or_run(dataset, researcher, chat_server, monkeypatch):
    monkeypatch.delenv("RATELAB_TEST_JUDGE_KEY", raising=False)
    make_judge(researcher, chat_server, name="hosted", api_key_env="RATELAB_TEST_JUDGE_KEY")
    with pytest.raises(CommandError, match="RATELAB_TEST_JUDGE_KEY, which is not set"):
        call_command("compute_metrics", "--dataset", "toy", "--metric", "judge:hosted", "--no-progress")
    assert not chat_server.requests and not MetricRun.objects.exists()


@pytest.mark.parametrize("variable", ["DJANGO_SECRET_KEY", "AWS_SECRET_ACCESS_KEY", "PROLIFIC_API_TOKEN"])
def test_a_judge_naming_one_of_the_servers_own_secrets_never_sends_it_nor_tells_whether_it_is_set(
    dataset, chat_server, monkeypatch, researcher_client, variable
):
    researcher = dataset.owner
    # The base URL is the researcher's choice: the key variable must not be the server's credentials,
    # even where the operator assigned it by mistake.
    monkeypatch.setattr(django_settings, "JUDGE_KEY_VARIABLES", {"*": (variable,)})
    monkeypatch.setenv(variable, "server-credential")
    judge = make_judge(researcher, chat_server, name="hosted", api_key_env=variable)  # stored before the rule
    with pytest.raises(CommandError, match="cannot be a judge's key variable"):
        call_command("compute_metrics", "--dataset", "toy", "--metric", "judge:hosted", "--no-progress")
    assert not chat_server.requests and not MetricRun.objects.exists()
    page = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert "is set" not in page and "server-credential" not in page and f"${variable} is refused" in page


def test_an_operators_host_list_refuses_other_hosts_on_the_form_and_before_any_request(
    dataset, chat_server, researcher_client, settings
):
    # a shared server lists the hosts judges may use, so no researcher points the workers at its
    # internal services (the page shows what a judge's server answers)
    judge = make_judge(dataset.owner, chat_server, name="local")  # stored before the list
    settings.JUDGE_ALLOWED_HOSTS = ["api.example.org", ".inference.example.net"]
    with pytest.raises(CommandError, match=r"127\.0\.0\.1 is not among the hosts this server's judges may use"):
        call_command("compute_metrics", "--dataset", "toy", "--metric", "judge:local", "--no-progress")
    assert not chat_server.requests and not MetricRun.objects.exists()
    form = {"name": "other", "base_url": chat_server.base_url, "model": "m", "template": judge.template,
            "temperature": "0", "samples": "1", "max_tokens": "8", "concurrency": "1"}  # fmt: skip
    page = researcher_client.post(reverse("scoring:judges"), form).content.decode()
    assert "is not among the hosts" in page and Judge.objects.count() == 1
    assert base_url_problem("https://api.example.org/v1") == ""
    assert (
        base_url_problem("https://eu.inference.example.net/v1")
        == base_url_problem("http://inference.example.net")
        == ""
    )
    assert base_url_problem("https://api.example.org.evil.test/v1") != ""
    settings.JUDGE_ALLOWED_HOSTS = ["*"]
    assert base_url_problem(chat_server.base_url) == ""


def test_host_list_entries_are_read_as_djangos_allowed_hosts_are_written(settings):
    # "[::1]" (ALLOWED_HOSTS' way of writing an IPv6 address) and a trailing dot matched nothing:
    # the host they name was refused
    settings.JUDGE_ALLOWED_HOSTS = ["[::1]", "API.Example.org.", ".Inference.example.net."]
    assert base_url_problem("http://[::1]:8000/v1") == ""
    assert base_url_problem("https://api.example.org/v1") == base_url_problem("https://api.example.org./v1") == ""
    assert base_url_problem("https://eu.inference.example.net/v1") == ""
    assert base_url_problem("http://[::2]:8000/v1") != "" and base_url_problem("https://example.org/v1") != ""


def test_a_listed_host_cannot_redirect_the_workers_to_a_host_off_the_list(compute, dataset, chat_server, settings):
    # The host list is checked on the base URL only: the SDK's client followed redirects, so a
    # listed server answering 307 had the worker POST the prompt to any host (an internal one).
    internal = ChatServer(answer=scoring_server).start()
    try:
        port = internal.httpd.server_address[1]
        location = f"http://localhost:{port}/v1/chat/completions"
        chat_server.answer = lambda body, n: Scripted(307, headers={"Location": location})
        make_judge(dataset.owner, chat_server, name="local")
        settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1"]  # "localhost" is not listed
        with pytest.raises(JudgeRequestFailed, match="HTTP 307"):
            compute(dataset=dataset, metrics=["judge:local"])
        assert chat_server.requests and not internal.requests
    finally:
        internal.stop()


def test_the_key_is_read_from_the_environment_sent_and_never_stored_or_shown(
    compute, dataset, chat_server, monkeypatch, researcher_client
):
    monkeypatch.setenv("RATELAB_TEST_JUDGE_KEY", "sk-test-very-secret")
    chat_server.answer = scoring_server
    judge = make_judge(dataset.owner, chat_server, name="hosted", api_key_env="RATELAB_TEST_JUDGE_KEY")
    compute(dataset=dataset, metrics=["judge:hosted"])
    assert {auth for _, _, auth in chat_server.requests} == {"Bearer sk-test-very-secret"}
    for url in (reverse("scoring:judges"), reverse("scoring:judge_detail", args=[judge.pk])):
        page = researcher_client.get(url).content.decode()
        assert "sk-test-very-secret" not in page and "$RATELAB_TEST_JUDGE_KEY is set" in page
    stored = [str(v) for model in (judge, *JudgeUsage.objects.all()) for v in vars(model).values()]
    assert not any("very-secret" in value for value in stored)


def test_a_server_echoing_the_key_in_its_replies_gets_it_neither_stored_nor_shown(
    compute, dataset, chat_server, monkeypatch, researcher_client
):
    # A proxy or a misconfigured server that repeats the request's header in its reply (unreadable as
    # a score: kept as the page's example), or a reply that quotes it next to a readable score.
    monkeypatch.setenv("RATELAB_TEST_JUDGE_KEY", "sk-test-very-secret")
    chat_server.answer = lambda body, nth: (
        "Authorization: Bearer sk-test-very-secret" if nth % 2 else "Score: 4 (key sk-test-very-secret)"
    )
    judge = make_judge(dataset.owner, chat_server, name="echo", api_key_env="RATELAB_TEST_JUDGE_KEY")
    compute(dataset=dataset, metrics=["judge:echo"])
    page = researcher_client.get(reverse("scoring:judge_detail", args=[judge.pk])).content.decode()
    assert "Bearer [key]" in page and "sk-test-very-secret" not in page
    stored = [
        str(v) for model in (*JudgeCacheEntry.objects.all(), *JudgeUsage.objects.all()) for v in vars(model).values()
    ]
    assert JudgeCacheEntry.objects.exists() and not any("very-secret" in value for value in stored)
    assert MetricScore.objects.filter(metric="judge:echo", value=4).exists()


def test_a_judge_run_records_the_judges_signature_with_its_endpoint_host_and_no_key(
    compute, dataset, chat_server, monkeypatch
):
    monkeypatch.setenv("RATELAB_TEST_JUDGE_KEY", "sk-test-very-secret")
    chat_server.answer = scoring_server
    make_judge(dataset.owner, chat_server, name="hosted", api_key_env="RATELAB_TEST_JUDGE_KEY")
    compute(dataset=dataset, metrics=["judge:hosted"])
    line = MetricRun.objects.get(dataset=dataset).signatures["judge:hosted"]
    host = chat_server.base_url.split("//", 1)[1].split("/", 1)[0]
    assert line.startswith("judge:hosted|") and f"endpoint:{host}|" in line and "template:rating|" in line
    assert "very-secret" not in line and "RATELAB_TEST_JUDGE_KEY" not in line


def test_a_key_that_vanishes_from_a_workers_environment_fails_the_run_with_a_clear_error(
    compute, dataset, researcher, chat_server, monkeypatch
):
    monkeypatch.setenv("RATELAB_TEST_JUDGE_KEY", "k")
    make_judge(researcher, chat_server, name="hosted", api_key_env="RATELAB_TEST_JUDGE_KEY")
    run = services.metrics_compute(dataset=dataset, metrics=["judge:hosted"], dispatch=False)
    monkeypatch.delenv("RATELAB_TEST_JUDGE_KEY")
    with pytest.raises(Exception, match="not set"):
        services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert not chat_server.requests


def test_a_server_that_keeps_failing_fails_the_run_and_keeps_the_answers_it_gave(compute, dataset, judge, chat_server):
    chat_server.answer = lambda body, n: Scripted(500) if "nothing" in body["messages"][-1]["content"] else "Score: 4"
    with pytest.raises(JudgeRequestFailed, match="2 failed, 10 answered, of 12 prompt"):
        compute(dataset=dataset, metrics=["judge:local"])
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED and "HTTP 500" in run.error
    assert JudgeCacheEntry.objects.count() == 10  # the 10 answered prompts are kept for the retry
    chat_server.requests.clear()
    chat_server.answer = scoring_server
    compute(dataset=dataset, metrics=["judge:local"])
    assert len(chat_server.requests) == 2  # only the two that failed are asked again


def test_a_judge_whose_endpoint_refuses_connections_fails_the_run_after_a_few_prompts_and_charges_nothing(
    compute, dataset, researcher, dead_url
):
    Judge.objects.create(owner=researcher, name="dead", base_url=dead_url, model="judge-model", concurrency=1)
    with pytest.raises(JudgeRequestFailed, match=f"cannot reach {dead_url}"):
        compute(dataset=dataset, metrics=["judge:dead"])
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED
    assert (
        f"chunk 0: 3 failed, 9 not sent, 0 answered, of 12 prompt(s) not in the cache; first failure: cannot "
        f"reach {dead_url}: " in run.error
    )
    assert f"Stopped once {dead_url} could not be reached for 3 request(s) in a row" in run.error
    assert "the 9 not sent were neither charged nor stored" in run.error
    usage = JudgeUsage.objects.get(run=run)
    # nothing answered, nothing paid: the row counts prompts answered (from the cache or by a request)
    assert (usage.prompts, usage.cached, usage.requests, usage.prompt_tokens) == (0, 0, 0, 0)
    assert not JudgeCacheEntry.objects.exists()


def test_unknown_and_pairwise_judges_are_refused_as_metrics(dataset, researcher, chat_server):
    make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    with pytest.raises(KeyError, match="no judge named 'nope'"):
        services.metric_names(["judge:nope"], owner=researcher.pk)
    with pytest.raises(KeyError, match="judges pairs"):
        services.metric_names(["judge:pairs"], owner=researcher.pk)
    assert "judge:pairs" not in services.metric_names([], owner=researcher.pk)


def test_another_researchers_judge_of_the_same_name_is_not_used(compute, dataset, other_researcher, chat_server):
    make_judge(other_researcher, chat_server, name="local")
    with pytest.raises(KeyError, match="no judge named 'local'"):
        compute(dataset=dataset, metrics=["judge:local"])


def test_the_compute_button_runs_a_ticked_judge_in_chunks_with_progress(
    dataset, judge, researcher_client, django_capture_on_commit_callbacks
):
    page = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    assert 'value="judge:local"' in page
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["judge:local"]}
        )
    assert response.status_code == 302
    run = MetricRun.objects.get()
    progress = researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert progress["status"] == "done" and progress["done_chunks"] == progress["total_chunks"] == 1
    assert metric_scores(dataset=dataset)["judge:local"] == expected_scores(dataset)


def test_the_compute_button_says_why_a_judge_without_its_key_cannot_run(
    dataset, researcher, chat_server, researcher_client
):
    make_judge(researcher, chat_server, name="hosted", api_key_env="RATELAB_TEST_UNSET_KEY")
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    page = researcher_client.post(url, {"metric": ["judge:hosted"]}, follow=True).content.decode()
    assert "RATELAB_TEST_UNSET_KEY, which is not set (set it where the Celery workers run" in page
    assert "this command" not in page  # a page is no command
    assert not MetricRun.objects.exists() and not chat_server.requests


def test_prices_give_each_run_its_cost(compute, dataset, researcher, chat_server):
    chat_server.answer = scoring_server
    make_judge(
        researcher,
        chat_server,
        name="priced",
        price_per_million_prompt_tokens="2.0000",
        price_per_million_completion_tokens="10.0000",
    )
    run = compute(dataset=dataset, metrics=["judge:priced"])
    usage = JudgeUsage.objects.get(run=run)
    assert float(usage.cost) == pytest.approx((usage.prompt_tokens * 2 + usage.completion_tokens * 10) / 1e6)
