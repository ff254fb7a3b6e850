"""Embedded mode (no broker): a page that starts long work answers at once; the work runs on
the web process's background threads and the page's progress then shows it finish.

The work is held at a gate inside the scoring engine, so "before it finishes" is certain
rather than timed. SQLite's in-memory test database is shared between threads, and the
test commits (transactional_db) so that the pool's threads see its rows.
"""

import threading

import pytest
from django.urls import reverse

import scoring.metrics as engine
from scoring.adem import pipeline
from scoring.models import AdemModel, MetricRun, MetricScore, TrainingRun
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["hi", "how are you?"],
        "references": ["i am good thank you"],
        "responses": [{"system": "s", "text": ["i am fine", "good thanks"][i % 2]}],
    }
    for i in range(6)
]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gate(monkeypatch):
    """Holds every call of the scoring engine until the test opens it."""
    opened, entered = threading.Event(), threading.Event()
    real = engine.score

    def held(*args, **kwargs):
        entered.set()
        assert opened.wait(30), "the test never opened the gate"
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "score", held)
    yield opened, entered
    opened.set()  # never leave a pool thread waiting


def test_compute_metrics_answers_before_the_run_finishes_and_the_progress_then_shows_it_done(
    client, researcher, embedded_background, gate
):
    opened, entered = gate
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    client.force_login(researcher)

    response = client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["bleu1"]})

    assert response.status_code == 302
    # Read the run only once the pool holds it at the gate: the tests' in-memory SQLite uses a shared
    # cache, where a read beside the pool's first write makes that write fail ("table is locked")
    # instead of waiting, as the embedded mode's WAL file would.
    assert entered.wait(10), "the run never started on the background pool"
    run = MetricRun.objects.get()
    progress = client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert progress["status"] in ("queued", "running") and progress["done_chunks"] == 0
    assert MetricScore.objects.count() == 0

    opened.set()
    embedded_background()

    progress = client.get(reverse("scoring:run_progress", args=[run.pk])).json()
    assert (progress["status"], progress["done_chunks"], progress["total_chunks"]) == ("done", 1, 1)
    assert MetricScore.objects.filter(metric="bleu1").count() == 6


def test_without_the_background_pool_tests_and_commands_keep_the_work_in_the_request(client, researcher):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    client.force_login(researcher)
    client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["bleu1"]})
    assert MetricRun.objects.get().status == MetricRun.Status.DONE


def test_a_failure_on_the_background_pool_is_recorded_on_the_run(client, researcher, embedded_background, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("hyps and refs differ in length")

    monkeypatch.setattr(engine, "score", broken)
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    client.force_login(researcher)
    response = client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["bleu1"]})
    assert response.status_code == 302
    embedded_background()
    run = MetricRun.objects.get()
    assert run.status == MetricRun.Status.FAILED and "differ in length" in run.error


def holding(monkeypatch, owner, name):
    """Hold every call of `owner.name` until the test opens the gate: (opened, entered) events."""
    opened, entered = threading.Event(), threading.Event()
    real = getattr(owner, name)

    def held(*args, **kwargs):
        entered.set()
        assert opened.wait(30), "the test never opened the gate"
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, held)
    return opened, entered


@pytest.fixture
def usr_dataset(researcher, shared_data, settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    dataset = load_dataset_records(records=records, name="usr-pc", owner=researcher)
    load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall", owner=researcher)
    return dataset


@pytest.mark.shared_data
def test_train_adem_answers_before_the_training_runs_and_its_progress_then_shows_it_done(
    client, researcher, usr_dataset, embedded_background, monkeypatch
):
    opened, entered = holding(monkeypatch, pipeline, "encode_examples")  # the services call it there
    client.force_login(researcher)
    try:
        response = client.post(
            reverse("scoring:adem_train"),
            {"name": "web", "dataset": usr_dataset.pk, "encoder": "glove", "variant": "full", "seed": 0},
        )
        assert response.status_code == 302
        # read the run once the pool holds it at the gate (shared-cache SQLite: see the metrics test)
        assert entered.wait(30), "the training never started on the background pool"
        run = TrainingRun.objects.get(kind="train")
        assert response.url == reverse("scoring:adem_run", args=[run.pk])
        progress = client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
        assert progress["status"] in ("queued", "running") and progress["progress"] == []
    finally:
        opened.set()
    embedded_background(timeout=300)
    progress = client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert progress["status"] == "done", progress
    assert progress["progress"][0]["epoch"] == 1
    assert AdemModel.objects.get(name="web").status == AdemModel.Status.READY
