"""Computing metrics for a dataset: runs, chunks, versions, the command, the page (eager Celery)."""

import json
import re

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

import scoring.metrics as engine
from annotation.models import Response
from annotation.services.extensions.points import response_extras
from config.celery import app as celery_app
from scoring import tasks
from scoring.metrics.cider import cider
from scoring.models import AdemModel, MetricChunk, MetricRun, MetricScore
from scoring.selectors.scores import corpus_bleu_by_system, metric_scores, metric_summary_by_metric
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from scoring.services.metrics import scores as services_metric_scores
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import make_judge

FAST = ["bleu1", "bleu4", "rouge_l", "cider", "response_len"]

RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["hi there", "how are you?"],
        "references": ["i am fine thanks", "fine , and you ?"] if i % 3 == 0 else ["i am good thank you"],
        "responses": [
            {"system": "seq2seq", "text": ["i am fine", "good", "", "i am good thank you", "😀 über"][i % 5]},
            {"system": "human", "text": "i am good , thanks for asking"},
        ],
    }
    for i in range(12)
] + [{"context_id": "noref", "context": ["hello"], "references": [], "responses": [{"system": "human", "text": "hi"}]}]


@pytest.fixture(autouse=True)
def eager(monkeypatch):
    """These tests run the tasks in process even when CELERY_BROKER_URL names a broker."""
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="toy", owner=researcher)


def engine_scores(dataset, names):
    responses = list(
        Response.objects.filter(context__dataset=dataset, context__references__isnull=False)
        .distinct()
        .order_by("id")
        .values_list("id", "text", "context_id")
    )
    refs = {}
    for record in RECORDS:
        refs[record["context_id"]] = record["references"]
    external = {r.pk: r.context.external_id for r in Response.objects.filter(context__dataset=dataset)}
    hyps = [text for _, text, _ in responses]
    ref_lists = [refs[external[rid]] for rid, _, _ in responses]
    values = engine.score(hyps, ref_lists, names)
    return {name: dict(zip([rid for rid, _, _ in responses], values[name], strict=True)) for name in names}


def test_metrics_compute_stores_every_score_with_its_version(compute, dataset):
    run = compute(dataset=dataset, metrics=FAST, chunk_size=5)
    run.refresh_from_db()
    assert run.status == MetricRun.Status.DONE
    assert (run.total_chunks, run.done_chunks, run.total_responses) == (5, 5, 25)
    stored = metric_scores(dataset=dataset)
    expected = engine_scores(dataset, FAST)
    for name in FAST:
        for response_id, value in expected[name].items():
            assert stored[name][response_id] == pytest.approx(value, abs=1e-12)
    assert set(MetricScore.objects.values_list("version", flat=True)) == {"1"}
    # the response without reference gets rows whose value is undefined
    noref = Response.objects.get(context__external_id="noref")
    assert [stored[name][noref.pk] for name in FAST] == [None] * len(FAST)


def test_a_chunk_whose_responses_have_no_reference_stores_undefined_scores(compute, dataset):
    # chunks of one: the last holds only the response without reference, so the engine gets nothing
    names = ["bleu4", "embedding_average"]
    run = compute(dataset=dataset, metrics=names, chunk_size=1)
    run.refresh_from_db()
    assert (run.status, run.done_chunks) == (MetricRun.Status.DONE, 25)
    noref = Response.objects.get(context__external_id="noref")
    stored = metric_scores(dataset=dataset)
    assert [stored[name][noref.pk] for name in names] == [None, None]
    for name, expected in engine_scores(dataset, names).items():
        assert [stored[name][rid] for rid in expected] == pytest.approx(list(expected.values()), abs=1e-12)


def test_cider_in_chunks_uses_the_whole_dataset_as_corpus(compute, dataset):
    compute(dataset=dataset, metrics=["cider"], chunk_size=3)
    expected = engine_scores(dataset, ["cider"])["cider"]
    whole = cider(*_texts(dataset, expected))
    stored = metric_scores(dataset=dataset)["cider"]
    assert [stored[rid] for rid in expected] == pytest.approx(list(whole), abs=1e-12)


def _texts(dataset, ids):
    by_id = {r.pk: r for r in Response.objects.filter(pk__in=list(ids)).select_related("context")}
    refs = {record["context_id"]: record["references"] for record in RECORDS}
    return [by_id[i].text for i in ids], [refs[by_id[i].context.external_id] for i in ids]


def test_a_second_run_skips_up_to_date_scores_and_recomputes_stale_versions(compute, dataset):
    compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    again = compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    assert (again.total_responses, again.total_chunks, again.status) == (0, 0, MetricRun.Status.DONE)
    stale = MetricScore.objects.filter(metric="rouge_l").first()
    MetricScore.objects.filter(pk=stale.pk).update(version="0", value=-1.0)
    third = compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    assert third.total_responses == 1
    stale.refresh_from_db()
    assert stale.version == "1"
    assert stale.value != -1.0


def test_a_forced_run_overwrites_scores_in_place_across_several_statements(compute, dataset, monkeypatch):
    monkeypatch.setattr(services_metric_scores, "WRITE_BATCH", 7)  # 25 responses x 2 metrics: nine statements
    monkeypatch.setattr(services_metric_scores, "SQLITE_WRITE_BATCH", 7)  # (the same on SQLite)
    compute(dataset=dataset, metrics=["bleu4", "rouge_l"])
    before = dict(MetricScore.objects.values_list("pk", "value"))
    MetricScore.objects.update(value=-1.0, version="0")
    compute(dataset=dataset, metrics=["bleu4", "rouge_l"], force=True)
    after = MetricScore.objects.values_list("pk", "value", "version")
    assert len(after) == 50
    assert {pk: value for pk, value, _ in after} == before  # same rows, values restored
    assert {version for _, _, version in after} == {"1"}


def test_finished_chunks_are_not_redone(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=10, dispatch=False)
    first = run.chunks.get(index=0)
    services_metric_chunks.metric_chunk_compute(chunk=first)
    MetricScore.objects.filter(response_id__in=first.response_ids).update(value=42.0)
    tasks.compute_metrics.delay(run.pk)  # eager: runs here
    run.refresh_from_db()
    assert run.status == MetricRun.Status.DONE
    assert run.done_chunks == run.total_chunks == 3
    assert set(MetricScore.objects.filter(response_id__in=first.response_ids).values_list("value", flat=True)) == {42.0}
    assert list(run.chunks.values_list("attempts", flat=True)) == [1, 1, 1]


def test_a_chunk_that_loses_the_database_is_retried(dataset, monkeypatch):
    real = engine.score
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "score", flaky)
    monkeypatch.setattr(tasks.compute_metrics_chunk, "default_retry_delay", 0)
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=100, dispatch=False)
    chunk = run.chunks.get()
    tasks.compute_metrics_chunk.apply(args=(run.pk, chunk.pk))
    chunk.refresh_from_db()
    assert chunk.status == MetricChunk.Status.DONE
    assert chunk.attempts == 2
    assert MetricScore.objects.filter(metric="bleu1").count() == 25


def test_a_chunk_with_a_programming_error_fails_the_run_without_retry(compute, dataset, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("hyps and refs differ in length")

    monkeypatch.setattr(engine, "score", broken)
    with pytest.raises(ValueError, match="differ in length"):
        compute(dataset=dataset, metrics=["bleu1"])
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED
    assert "differ in length" in run.error
    assert run.chunks.get().attempts == 1


def test_command_computes_named_metrics_with_a_progress_bar(dataset, capsys):
    call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--metric", "length_diff")
    out = capsys.readouterr()
    assert "done, 1/1 chunks" in out.out
    assert "1/1" in out.err  # tqdm's bar
    assert set(MetricScore.objects.values_list("metric", flat=True)) == {"bleu4", "length_diff"}


@pytest.mark.django_db(transaction=True)  # the forked processes read what the test committed
def test_command_scores_chunks_in_several_processes(researcher):
    """On PostgreSQL (or SQLite in a file, SQLITE_TEST_NAME) two forked processes score beside this
    one; on an in-memory SQLite database the command scores everything itself."""
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    names = ["bleu4", "cider"]
    args = [arg for name in names for arg in ("--metric", name)]
    call_command("compute_metrics", "--dataset", "toy", *args, "--chunk-size", "4", "--processes", "3", "--no-progress")
    run = MetricRun.objects.get()
    assert (run.status, run.done_chunks, run.total_chunks) == (MetricRun.Status.DONE, 7, 7)
    assert set(run.chunks.values_list("status", "attempts")) == {(MetricChunk.Status.DONE, 1)}
    assert MetricScore.objects.count() == 25 * len(names)
    stored = metric_scores(dataset=dataset)
    for name, expected in engine_scores(dataset, names).items():
        assert [stored[name][rid] for rid in expected] == pytest.approx(list(expected.values()), abs=1e-12)


@pytest.mark.django_db(transaction=True)  # the other threads' connections read what the test committed
def test_command_writes_one_chunk_while_scoring_the_next_in_threads(researcher):
    """On PostgreSQL (or SQLite in a file) three threads take the chunks; on an in-memory SQLite
    database the command scores them in one."""
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--chunk-size", "3", "--threads", "3")
    run = MetricRun.objects.get()
    assert (run.status, run.done_chunks, run.total_chunks) == (MetricRun.Status.DONE, 9, 9)
    assert set(run.chunks.values_list("status", "attempts")) == {(MetricChunk.Status.DONE, 1)}
    stored = metric_scores(dataset=dataset)["bleu4"]
    expected = engine_scores(dataset, ["bleu4"])["bleu4"]
    assert [stored[rid] for rid in expected] == pytest.approx(list(expected.values()), abs=1e-12)
    assert len(stored) == 25


@pytest.mark.django_db(transaction=True)
def test_a_chunk_failing_in_a_thread_fails_the_command_and_the_run(researcher, monkeypatch):
    load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    real = engine.score
    calls = []

    def broken_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise ValueError("hyps and refs differ in length")
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "score", broken_third)
    with pytest.raises(ValueError, match="differ in length"):
        call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu1", "--chunk-size", "3", "--no-progress")
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED
    assert "differ in length" in run.error
    assert run.done_chunks < run.total_chunks


def test_command_rejects_unknown_metric_and_dataset(dataset):
    with pytest.raises(CommandError, match="unknown metric 'bleu9'"):
        call_command("compute_metrics", "--dataset", "toy", "--metric", "bleu9")
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        call_command("compute_metrics", "--dataset", "nope")


def test_response_extras_show_scores_beside_each_response(compute, dataset):
    compute(dataset=dataset, metrics=["bleu1", "rouge_l"])
    response = Response.objects.filter(context__dataset=dataset, text="i am fine").first()
    extras = response_extras(dataset, [response.pk])
    assert set(extras[response.pk]["metrics"]) == {"bleu1", "rouge_l"}
    assert extras[response.pk]["metrics"]["bleu1"] == pytest.approx(np.exp(1 - 4 / 3), rel=1e-6)


def test_corpus_bleu_by_system_covers_responses_with_references(dataset):
    scores = corpus_bleu_by_system(dataset=dataset)
    assert set(scores) == {"seq2seq", "human"}
    assert all(len(values) == 4 for values in scores.values())


def test_metric_means_are_turned_to_one_row_per_metric_with_systems_as_columns():
    summary = {"lstm": {"bleu1": (0.2, 3)}, "hred": {"bleu1": (0.1, 3), "rouge_l": (0.4, 2)}}
    systems, rows = metric_summary_by_metric(summary)
    assert systems == ["hred", "lstm"]
    assert rows == [("bleu1", [(0.1, 3), (0.2, 3)]), ("rouge_l", [(0.4, 2), None])]


# --- the page -------------------------------------------------------------------------------


def test_metrics_page_shows_one_rounded_table_with_systems_as_columns(researcher_client, compute, dataset):
    compute(dataset=dataset, metrics=["bleu1", "rouge_l"])
    html = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    table = html[html.index('id="metric-means"') : html.index("</table>", html.index('id="metric-means"'))]
    assert table.count("<tr>") == 3  # the header and one row per metric
    assert '<th scope="col" class="num">human</th>' in table and '<th scope="col" class="num">seq2seq</th>' in table
    assert '<div class="table-scroll"><table id="metric-means">' in html
    assert not re.search(r"\d\.\d{4,}", table)  # rounded to three places


def test_corpus_bleu_table_has_right_aligned_headers_over_its_rounded_numbers(researcher_client, dataset):
    html = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    table = html[html.index('id="corpus-bleu"') : html.index("</table>", html.index('id="corpus-bleu"'))]
    header = table[: table.index("</thead>")]
    assert '<th scope="col">System</th>' in header  # a human label, not the field name
    assert all(f'<th scope="col" class="num">BLEU-{n}</th>' in header for n in range(1, 5))
    assert '<th scope="row">seq2seq</th>' in table
    assert not re.search(r"\d\.\d{4,}", table)  # rounded to three places, like the means above


def test_metrics_page_needs_login(client, dataset):
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    assert client.get(url).status_code == 302


def test_metrics_page_is_hidden_from_other_researchers(client, other_researcher, dataset):
    client.force_login(other_researcher)
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    assert client.get(url).status_code == 404
    assert client.post(url).status_code == 404
    assert not MetricRun.objects.exists()


def test_owner_computes_metrics_with_the_button_and_sees_progress(
    researcher_client, dataset, django_capture_on_commit_callbacks
):
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    page = researcher_client.get(url)
    assert b"Compute metrics" in page.content
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(url, {"metric": ["bleu4", "rouge_l"]})
    assert response.status_code == 302
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.DONE
    assert MetricScore.objects.filter(metric="bleu4").count() == 25
    page = researcher_client.get(url)
    assert b"done: 1/1 chunks" in page.content
    assert b"rouge_l" in page.content
    assert b"Computing 2 metrics for 25 responses." in page.content and b"2 metrics</span>" in page.content
    progress = json.loads(researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).content)
    assert progress.pop("elapsed_s") >= 0
    assert progress == {
        "status": "done",
        "done_chunks": 1,
        "total_chunks": 1,
        "progress": 1.0,
        "phase": {},
        "phase_text": "",
        "error": "",
    }


def test_one_metric_is_named_in_the_singular(researcher_client, dataset, django_capture_on_commit_callbacks):
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.post(url, {"metric": ["bleu4"]})
    page = researcher_client.get(url).content.decode()
    assert "Computing 1 metric for 25 responses." in page and "1 metric</span>" in page
    assert "metric(s)" not in page


def test_a_second_press_while_a_run_is_queued_starts_no_second_run(
    researcher_client, dataset, django_capture_on_commit_callbacks
):
    # Two tabs, or a resubmitted form: the first run has not started yet when the second press comes.
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=False):
        researcher_client.post(url, {"metric": ["bleu4"]})
    first = MetricRun.objects.get()
    assert first.status == MetricRun.Status.QUEUED
    with django_capture_on_commit_callbacks(execute=True) as queued:
        response = researcher_client.post(url, {"metric": ["bleu4"]}, follow=True)
    assert list(MetricRun.objects.all()) == [first] and queued == []
    assert f"A run is already queued on this dataset (run {first.pk}, 0/1 chunks)" in response.content.decode()
    assert not MetricScore.objects.exists()


def test_a_press_after_the_run_ended_starts_a_new_run(researcher_client, dataset, django_capture_on_commit_callbacks):
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    for metric in ("bleu4", "rouge_l"):
        with django_capture_on_commit_callbacks(execute=True):
            researcher_client.post(url, {"metric": [metric]})
    assert [run.status for run in MetricRun.objects.order_by("pk")] == [MetricRun.Status.DONE] * 2


def test_a_trained_adem_model_can_be_ticked_and_computed_on_its_own(
    researcher_client, researcher, other_researcher, dataset, django_capture_on_commit_callbacks
):
    AdemModel.objects.create(
        owner=researcher, dataset=dataset, name="mine", status="ready", checkpoint_sha256="ab" * 32
    )
    AdemModel.objects.create(owner=other_researcher, name="theirs", status="ready", checkpoint_sha256="cd" * 32)
    url = reverse("scoring:dataset_metrics", args=[dataset.pk])
    page = researcher_client.get(url).content.decode()
    assert '<input type="checkbox" name="metric" value="adem:mine">' in page and "adem:theirs" not in page
    with django_capture_on_commit_callbacks(execute=False):
        researcher_client.post(url, {"metric": ["adem:mine"]})
    assert MetricRun.objects.get().metrics == ["adem:mine"]


def test_the_definitions_list_defines_the_owners_adem_models_and_judges_too(
    researcher_client, researcher, other_researcher, dataset, chat_server
):
    AdemModel.objects.create(
        owner=researcher, dataset=dataset, name="mine", status="ready", checkpoint_sha256="ab" * 32
    )
    AdemModel.objects.create(owner=other_researcher, name="theirs", status="ready", checkpoint_sha256="cd" * 32)
    make_judge(researcher, chat_server, name="rater")
    page = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    definitions = page[page.index('id="defs-heading"') :]
    assert "<dt>adem:mine <small>vabababababab</small></dt><dd>ADEM model mine (a learned evaluator" in definitions
    assert re.search(r"<dt>judge:rater <small>v[^<]+</small></dt><dd>LLM judge rater: ", definitions)
    assert "adem:theirs" not in definitions
    # each is signed like the built-in metrics: what produces its scores
    assert definitions.count('<code class="signature code-wrap">') == len(engine.all_metrics()) + 2


def test_button_post_needs_csrf_token(researcher, dataset):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(researcher)
    assert strict.post(reverse("scoring:dataset_metrics", args=[dataset.pk])).status_code == 403
    assert not MetricRun.objects.exists()


def test_progress_of_another_researchers_run_is_hidden(client, other_researcher, compute, dataset):
    run = compute(dataset=dataset, metrics=["bleu1"])
    client.force_login(other_researcher)
    assert client.get(reverse("scoring:run_progress", args=[run.pk])).status_code == 404


def test_scores_upsert_pairs_each_response_with_its_metric_version_and_value(dataset, monkeypatch):
    """Several metrics with different versions, undefined values, statements of a few responses
    and a shorter last one: every row gets its own response, metric, version and value."""
    monkeypatch.setattr(services_metric_scores, "WRITE_BATCH", 9)  # 3 metrics: 3 responses per statement
    monkeypatch.setattr(services_metric_scores, "SQLITE_WRITE_BATCH", 9)  # (the same on SQLite)
    ids = list(Response.objects.filter(context__dataset=dataset).order_by("id").values_list("id", flat=True))[:8]
    scores = {
        "bleu1": [i / 10 for i in range(8)],
        "rouge_l": [None if i % 3 == 0 else -i / 7 for i in range(8)],
        "cider": [float(i * i) for i in range(8)],
    }
    versions = {"bleu1": "1", "rouge_l": "2", "cider": "3b"}
    assert services_metric_scores.scores_upsert(response_ids=ids, scores=scores, versions=versions) == 24
    scores["cider"] = [-1.0] * 8  # again: the same rows updated in place
    assert services_metric_scores.scores_upsert(response_ids=ids, scores=scores, versions=versions) == 24
    stored = {
        (r, m): (v, value)
        for r, m, v, value in MetricScore.objects.values_list("response", "metric", "version", "value")
    }
    assert len(stored) == 24
    for name, values in scores.items():
        for response_id, value in zip(ids, values, strict=True):
            assert stored[response_id, name] == (versions[name], value)


def test_metric_names_of_the_registry_need_no_query():
    # no database fixture: a query for the trained ADEM models would raise here
    assert services.metric_names(["rouge_l", "bleu1", "bleu1"]) == ["rouge_l", "bleu1"]


@pytest.mark.parametrize(
    ("names", "chunks", "cores", "expected"),
    [
        (["bleu1", "bleu2", "bleu3", "bleu4", "rouge_l", "cider"], 10, 2, 2),
        (["bleu4", "rouge_l_nostop", "length_diff"], 50, 16, 2),  # two at most by default
        (["bleu4", "cider"], 9, 2, 1),  # fewer than five chunks each
        (["bleu4", "cider"], 50, 1, 1),  # one core
        (["bleu4", "meteor"], 50, 2, 1),  # METEOR: a Java process in each
        (["bleu4", "embedding_average"], 50, 2, 1),  # GloVe vectors loaded in each
        (["sentence_cosine"], 50, 2, 1),  # a neural model loaded in each
        (["meteor_nostop"], 50, 2, 1),
        (["bleu4", "adem:tuned"], 50, 2, 1),  # not the engine's
        (["judge:gpt"], 50, 2, 1),
    ],
)
def test_the_default_forks_a_second_process_only_for_word_overlap_metrics_with_enough_chunks(
    monkeypatch, names, chunks, cores, expected
):
    from scoring.management.commands import compute_metrics

    monkeypatch.setattr(compute_metrics.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert compute_metrics.auto_processes(names, chunks) == expected


@pytest.mark.django_db(transaction=True)  # forked processes read what the test committed
def test_the_command_uses_the_default_number_of_processes_unless_told(researcher, monkeypatch):
    """13 chunks of BLEU-4: two processes by default on PostgreSQL (or SQLite in a file) with two
    cores, one where `--processes 1` says so; on an in-memory SQLite database always one."""
    from scoring.management.commands import compute_metrics

    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    monkeypatch.setattr(compute_metrics.os, "sched_getaffinity", lambda pid: {0, 1})
    real = compute_metrics.Command._run_here
    used = []

    def spy(self, *args):  # (run, chunk_ids, processes, threads, bar)
        used.append(args[2])
        return real(self, *args)

    monkeypatch.setattr(compute_metrics.Command, "_run_here", spy)
    args = ["compute_metrics", "--dataset", "toy", "--metric", "bleu4", "--chunk-size", "2", "--no-progress"]
    call_command(*args)
    call_command(*args, "--force", "--processes", "1")
    shared = not (connection.vendor == "sqlite" and connection.is_in_memory_db())
    assert used == ([2, 1] if shared else [1, 1])
    stored = metric_scores(dataset=dataset)["bleu4"]
    expected = engine_scores(dataset, ["bleu4"])["bleu4"]
    assert [stored[rid] for rid in expected] == pytest.approx(list(expected.values()), abs=1e-12)
