"""A metric run's progress inside its chunks (F02): the family being scored, a model loading first,
elapsed time; on the run's row, in the progress JSON and on the Metrics page."""

import datetime
import threading

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

import scoring.metrics as engine
from config.celery import app as celery_app
from scoring.metrics import registry, resources
from scoring.models import MetricRun
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from scoring.services.metrics import progress as metric_progress
from tests.factories import load_dataset_records

RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["hi there", "how was the weekend?"],
        "references": ["it was lovely , we went hiking"],
        "responses": [
            {"system": "hred", "text": "i don't know ."},
            {"system": "lstm", "text": "we went hiking"},
            {"system": "human", "text": f"lovely, a long walk {i}"},
        ],
    }
    for i in range(6)
]  # 18 responses, as in the walk


@pytest.fixture(autouse=True)
def eager(monkeypatch):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="walk-study", owner=researcher)


@pytest.fixture
def slow_family(monkeypatch):
    """A metric whose family needs a resource this process has not loaded: `loads` counts its loads."""
    loads = []

    def load():
        loads.append(1)

    resource = resources.Resource("test_model", "the test model", 7.0, load, lambda: bool(loads))

    def family(batch, names):
        assert loads, "the resource is loaded before the family scores"
        return {"test_metric": [1.0] * len(batch)}

    monkeypatch.setitem(resources._RESOURCES, resource.key, resource)
    monkeypatch.setattr(resources, "_ensured", set())  # this test's process has loaded nothing of it yet
    monkeypatch.setitem(registry._REGISTRY, "test_metric", registry.Metric("test_metric", "1", family))
    monkeypatch.setitem(registry._FAMILIES, family, registry.FamilyInfo("the test family", (resource.key,)))
    return loads


def test_the_engine_reports_each_family_before_it_scores_with_the_metrics_done_so_far():
    steps = []
    names = ["bleu1", "bleu2", "rouge_l", "response_len"]
    engine.score(["a b c", "d e"], [["a b c"], ["d f"]], names, progress=steps.append)
    assert [(s.family, s.done, s.total) for s in steps] == [
        ("BLEU", 0, 4),
        ("ROUGE-L", 2, 4),
        ("lengths", 3, 4),
        ("", 4, 4),
    ]
    assert all(s.loading == () for s in steps)  # these load nothing


def test_the_engine_announces_a_resource_before_loading_it_and_loads_it_once_per_process(slow_family):
    first, second = [], []
    engine.score(["a"], [["a"]], ["test_metric", "rouge_l"], progress=first.append)
    engine.score(["a"], [["a"]], ["test_metric"], progress=second.append)
    announced = [s for s in first if s.family == "the test family"]
    assert [r.label for r in announced[0].loading] == ["the test model"]
    assert slow_family == [1]  # loaded once, not again on the second run
    assert all(s.loading == () for s in second)


def test_a_resource_asked_for_by_two_threads_at_once_loads_once(monkeypatch):
    started, release, loads = threading.Event(), threading.Event(), []

    def load():
        loads.append(1)
        started.set()
        release.wait(5)

    monkeypatch.setattr(resources, "_ensured", set())
    monkeypatch.setitem(
        resources._RESOURCES, "slow", resources.Resource("slow", "slow", 1.0, load, lambda: bool(loads))
    )
    warm_up = threading.Thread(target=resources.ensure, args=("slow",))
    warm_up.start()
    started.wait(5)
    waiting = threading.Thread(target=resources.ensure, args=("slow",))
    waiting.start()  # a run arriving while the warm-up loads: it waits, it does not load again
    release.set()
    warm_up.join(5)
    waiting.join(5)
    assert loads == [1]
    assert resources.pending(["slow"]) == []


def test_a_chunk_records_its_families_on_the_run_and_clears_them_when_done(dataset, monkeypatch, slow_family):
    written = []
    monkeypatch.setattr(metric_progress, "PHASE_EVERY_S", 0)  # every step, not one per half second
    real = metric_progress.metric_run_phase_set

    def spy(*, run, phase):
        written.append(phase)
        real(run=run, phase=phase)

    monkeypatch.setattr(metric_progress, "metric_run_phase_set", spy)
    run = services.metrics_compute(
        dataset=dataset, metrics=["bleu1", "rouge_l", "test_metric"], dispatch=False, chunk_size=100
    )
    services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert [(p["family"], p["done"], p["total"], p["chunk"]) for p in written] == [
        ("BLEU", 0, 3, 0),
        ("ROUGE-L", 1, 3, 0),
        ("the test family", 2, 3, 0),
    ]
    assert written[2]["loading"] == [{"label": "the test model", "typical_s": 7.0}]
    run.refresh_from_db()
    assert run.done_chunks == 1 and run.phase == {}


def test_writes_are_spaced_but_a_load_is_always_written(dataset, monkeypatch, slow_family):
    written = []
    monkeypatch.setattr(metric_progress, "PHASE_EVERY_S", 3600)
    monkeypatch.setattr(metric_progress, "metric_run_phase_set", lambda *, run, phase: written.append(phase["family"]))
    run = services.metrics_compute(
        dataset=dataset, metrics=["bleu1", "rouge_l", "test_metric"], dispatch=False, chunk_size=100
    )
    services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get())
    assert written == ["BLEU", "the test family"]  # the first, then the load; ROUGE-L came too soon


def _frozen_run(dataset, *, status=MetricRun.Status.RUNNING, phase=None, seconds_ago=95):
    """A run stopped mid-way, as the page would find it while a worker scores its chunk."""
    run = services.metrics_compute(dataset=dataset, dispatch=False)
    MetricRun.objects.filter(pk=run.pk).update(
        status=status,
        phase=phase or {},
        created_at=timezone.now() - datetime.timedelta(seconds=seconds_ago),
    )
    run.refresh_from_db()
    return run


LOADING_MINILM = {
    "chunk": 0,
    "family": "sentence cosine and BERTScore (MiniLM)",
    "done": 0,
    "total": 28,
    "loading": [{"label": "the MiniLM model (torch, transformers)", "typical_s": 4.0}],
    "at": "2026-11-29T04:00:00+00:00",
}
SCORING_METEOR = {**LOADING_MINILM, "family": "METEOR 1.5 (Java)", "done": 21, "loading": []}


def test_the_progress_json_says_what_loads_first_and_how_long_it_has_run(researcher_client, dataset):
    run = _frozen_run(dataset, phase=LOADING_MINILM)
    progress = researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert progress["phase"]["family"] == "sentence cosine and BERTScore (MiniLM)"
    assert progress["elapsed_s"] >= 95
    text = progress["phase_text"]
    assert "Loading the MiniLM model (torch, transformers)" in text
    assert "loads it once, on its first run after it starts (about 4 s" in text and "0 of 28 metrics done" in text
    assert "1 min 3" in text  # 95 s and a little, so far
    assert progress["progress"] == 0.0


def test_the_bar_moves_inside_a_chunk(researcher_client, dataset):
    run = _frozen_run(dataset, phase=SCORING_METEOR)
    progress = researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert progress["progress"] == pytest.approx(21 / 28)
    assert progress["phase_text"].startswith("Scoring METEOR 1.5 (Java): 21 of 28 metrics done;")


def test_the_metrics_page_shows_the_phase_elapsed_time_and_a_moving_bar(researcher_client, dataset):
    run = _frozen_run(dataset, phase=SCORING_METEOR, seconds_ago=12)
    page = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    assert f'data-progress-url="{reverse("scoring:run_progress", args=[run.pk])}"' in page
    assert '<progress id="run-progress" max="100" value="75.0">' in page
    assert "Scoring METEOR 1.5 (Java): 21 of 28 metrics done; 1" in page and " s so far." in page
    assert "computing, 75% done" in page  # the pipeline's Metrics step moves with it


def test_a_queued_run_says_it_waits_for_a_worker(researcher_client, dataset):
    run = _frozen_run(dataset, status=MetricRun.Status.QUEUED, seconds_ago=5)
    progress = researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert progress["phase_text"].startswith("Queued, waiting for a worker: ")


def test_an_ended_run_shows_no_phase(researcher_client, dataset):
    run = _frozen_run(dataset, status=MetricRun.Status.DONE, phase=SCORING_METEOR)
    page = researcher_client.get(reverse("scoring:dataset_metrics", args=[dataset.pk])).content.decode()
    assert 'id="run-phase" class="run-phase" hidden' in page
    assert researcher_client.get(reverse("scoring:run_progress", args=[run.pk])).json()["phase_text"] == ""


def test_on_sqlite_a_phase_waits_for_another_threads_write_only_when_it_announces_a_load(dataset):
    if connection.vendor != "sqlite":
        pytest.skip("the writing turn is SQLite's")
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], dispatch=False)
    write = services_metric_chunks._phase_writer(run)
    turn = services_metric_chunks._sqlite_writing_turn
    turn.acquire()  # another thread writing a chunk's scores
    try:
        skipped = write({"family": "BLEU"}, urgent=False)
    finally:
        turn.release()
    assert skipped is False
    turn.acquire()
    threading.Timer(0.2, turn.release).start()  # that write ends a moment later
    assert write({"family": "METEOR", "loading": [{"label": "the jar", "typical_s": 5}]}, urgent=True) is True
    run.refresh_from_db()
    assert run.phase["family"] == "METEOR"


def test_a_resource_with_a_process_of_its_own_starts_loading_before_its_family_asks(monkeypatch):
    threads = []
    jar = resources.Resource(
        "test_jar",
        "the test jar",
        5.0,
        lambda: threads.append(threading.current_thread().name),
        lambda: bool(threads),
        own_process=True,
    )

    def family(batch, names):
        return {"test_jar_metric": [0.5] * len(batch)}

    monkeypatch.setattr(resources, "_ensured", set())
    monkeypatch.setitem(resources._RESOURCES, jar.key, jar)
    monkeypatch.setitem(registry._REGISTRY, "test_jar_metric", registry.Metric("test_jar_metric", "1", family))
    monkeypatch.setitem(registry._FAMILIES, family, registry.FamilyInfo("the jar family", (jar.key,)))
    assert engine.score(["a"], [["a"]], ["bleu1", "test_jar_metric"])["test_jar_metric"] == [0.5]
    assert threads == ["load-test_jar"]  # started on its own thread at the run's start, loaded once
