"""Runs that outlive a dead worker: start counts, the watchdog's re-queue / close / fail, the
command, the Celery settings that make a lost worker's task come back (eager Celery, any database).

The real worker killed mid-run is tests/scoring/test_worker_lost.py.
"""

import os
import subprocess
import sys
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings as django_settings
from django.core.management import call_command
from django.utils import timezone

import scoring.metrics as engine
from config.celery import app as celery_app
from config.runtime.heartbeat import heartbeat
from scoring import tasks
from scoring.models import AdemModel, MetricChunk, MetricRun, MetricScore, TrainingRun
from scoring.services import watchdog
from scoring.services.adem import training as services_adem
from scoring.services.metrics import chunks as services_metric_chunks
from scoring.services.metrics import compute as services
from tests.factories import load_dataset_records
from tests.test_settings import manage

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [
    {
        "context_id": f"c{i}",
        "context": ["hi there", "how are you?"],
        "references": ["i am good thank you"],
        "responses": [{"system": "s", "text": ["i am fine", "good thanks", "i am good"][i % 3]}],
    }
    for i in range(9)
]


@pytest.fixture(autouse=True)
def watchdog_settings(settings, monkeypatch):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    settings.RUN_STALL_SECONDS = 60
    settings.RUN_MAX_ATTEMPTS = 3


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=RECORDS, name="toy", owner=researcher)


def stalled(run, seconds=120):
    """The run as a dead worker leaves it: running, its last sign of life `seconds` ago."""
    type(run).objects.filter(pk=run.pk).update(
        status=type(run).Status.RUNNING, heartbeat_at=timezone.now() - timedelta(seconds=seconds)
    )
    run.refresh_from_db()
    return run


def score_chunk(run, index):
    chunk = run.chunks.get(index=index)
    tasks.compute_metrics_chunk.apply(args=(run.pk, chunk.pk), throw=True)


def test_a_stalled_run_is_requeued_and_its_missing_chunks_are_scored_once(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    score_chunk(run, 0)  # then its worker died with chunk 1 in hand
    MetricChunk.objects.filter(run=run, index=1).update(attempts=1)
    stalled(run)

    outcome = watchdog.metric_runs_recover()

    run.refresh_from_db()
    assert outcome["requeued"] == [run.pk]
    assert (run.status, run.done_chunks, run.error) == (MetricRun.Status.DONE, 3, "")
    assert dict(run.chunks.values_list("index", "attempts")) == {0: 1, 1: 2, 2: 1}
    assert MetricScore.objects.filter(metric="bleu1").count() == 9


def test_a_run_with_a_recent_sign_of_life_is_left_alone(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    stalled(run, seconds=10)
    assert watchdog.metric_runs_recover() == {"requeued": [], "finished": [], "failed": []}
    run.refresh_from_db()
    assert (run.status, run.done_chunks) == (MetricRun.Status.RUNNING, 0)


def test_a_run_whose_chunks_are_all_stored_is_closed_when_its_closing_was_lost(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    for index in range(3):
        services_metric_chunks.metric_chunk_compute(chunk=run.chunks.get(index=index))  # stored, the run never closed
    stalled(run)

    assert watchdog.metric_runs_recover()["finished"] == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.done_chunks, run.error) == (MetricRun.Status.DONE, 3, "")
    assert run.finished_at is not None


def test_the_last_chunk_to_finish_closes_its_run_without_a_callback(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    MetricRun.objects.filter(pk=run.pk).update(status=MetricRun.Status.RUNNING)
    for index in range(3):
        run.refresh_from_db()
        assert run.status == MetricRun.Status.RUNNING
        score_chunk(run, index)
    run.refresh_from_db()
    assert (run.status, run.done_chunks) == (MetricRun.Status.DONE, 3)


def test_a_chunk_that_kills_its_worker_every_time_fails_the_run_saying_why(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    score_chunk(run, 0)
    MetricChunk.objects.filter(run=run, index=1).update(attempts=3)  # three starts, three dead workers
    stalled(run)

    assert watchdog.metric_runs_recover()["failed"] == [run.pk]
    run.refresh_from_db()
    assert run.status == MetricRun.Status.FAILED
    assert run.error.startswith("Chunk 2 of 3 was started 3 times and never finished")
    assert "out of memory" in run.error
    assert run.chunks.get(index=1).status == MetricChunk.Status.FAILED


def test_a_redelivered_chunk_past_its_starts_is_not_scored_again_and_fails_the_run(dataset):
    """Celery re-queues the task of a dead worker for ever (`reject_on_worker_lost`): the start count stops it."""
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    MetricChunk.objects.filter(run=run, index=0).update(attempts=3)

    score_chunk(run, 0)

    run.refresh_from_db()
    assert run.status == MetricRun.Status.FAILED and "was started 3 times" in run.error
    assert MetricScore.objects.count() == 0


def test_a_chunk_of_a_closed_run_is_skipped(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    services.metric_run_fail(run=run, error="stopped")
    run.refresh_from_db()
    score_chunk(run, 0)
    assert run.chunks.get(index=0).attempts == 0
    assert MetricScore.objects.count() == 0


def test_a_chunk_past_the_soft_time_limit_fails_the_run_naming_the_limit(dataset, monkeypatch):
    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(engine, "score", too_slow)
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=9, dispatch=False)
    with pytest.raises(SoftTimeLimitExceeded):
        score_chunk(run, 0)
    run.refresh_from_db()
    assert run.status == MetricRun.Status.FAILED
    limits = f"{django_settings.CELERY_TASK_SOFT_TIME_LIMIT:g} s, the soft limit of CELERY_TASK_TIME_LIMIT="
    assert run.error.startswith("chunk 0 ran past its time limit (") and limits in run.error
    assert run.chunks.get().attempts == 1  # not retried: a second try would take as long


def test_a_stalled_adem_run_is_started_again_from_its_queued_row(dataset, monkeypatch):
    model = AdemModel.objects.create(name="m", dataset=dataset, owner=dataset.owner, status=AdemModel.Status.RUNNING)
    run = TrainingRun.objects.create(
        kind=TrainingRun.Kind.TRAIN, adem_model=model, dataset=dataset, params={"name": "m"}, attempts=1
    )
    run.progress = [{"epoch": 1, "train_loss": 1.0, "val_pearson": 0.1}]  # the dead worker's epochs
    run.save()
    stalled(run)
    trained = []

    def train(*, run):  # the training itself is tested in test_adem_services.py
        trained.append((run.pk, run.attempts, list(run.progress)))
        TrainingRun.objects.filter(pk=run.pk).update(status=TrainingRun.Status.DONE)

    monkeypatch.setattr(services_adem, "adem_train_from_run", train)

    assert watchdog.training_runs_recover()["requeued"] == [run.pk]
    assert trained == [(run.pk, 2, [])]
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.DONE


def test_a_second_message_for_an_adem_run_a_live_worker_holds_does_not_train_it_twice(dataset, monkeypatch):
    """Training writes one model: a duplicate or a redelivered message must not start a second one
    while the first worker's heartbeat is fresh; once that heartbeat is old, it takes over."""
    run = TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, dataset=dataset, attempts=1)
    TrainingRun.objects.filter(pk=run.pk).update(status=TrainingRun.Status.RUNNING, heartbeat_at=timezone.now())
    trained = []
    monkeypatch.setattr(services_adem, "adem_train_from_run", lambda *, run: trained.append(run.attempts))

    tasks.adem_train_task.apply(args=(run.pk,), throw=True)
    assert trained == []
    run.refresh_from_db()
    assert (run.status, run.attempts) == (TrainingRun.Status.RUNNING, 1)

    stalled(run, seconds=2 * django_settings.RUN_HEARTBEAT_SECONDS + 5)  # its worker died
    tasks.adem_train_task.apply(args=(run.pk,), throw=True)
    assert trained == [2]


def test_an_adem_run_lost_too_often_fails_with_its_model_saying_why(dataset):
    model = AdemModel.objects.create(name="m", dataset=dataset, owner=dataset.owner, status=AdemModel.Status.RUNNING)
    run = TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, adem_model=model, dataset=dataset, attempts=3)
    stalled(run)

    assert watchdog.training_runs_recover()["failed"] == [run.pk]
    run.refresh_from_db()
    model.refresh_from_db()
    assert run.status == TrainingRun.Status.FAILED
    assert run.error.startswith("This Train ADEM run was started 3 times and never finished")
    assert (model.status, model.error) == (AdemModel.Status.FAILED, run.error)


def test_the_recover_runs_command_reports_what_it_did(dataset):
    run = services.metrics_compute(dataset=dataset, metrics=["bleu1"], chunk_size=3, dispatch=False)
    stalled(run)
    out = StringIO()
    call_command("recover_runs", stdout=out)
    assert f"metric runs: 1 requeued ({run.pk})" in out.getvalue()
    assert "ADEM runs: nothing stalled" in out.getvalue()
    run.refresh_from_db()
    assert run.status == MetricRun.Status.DONE  # eager: the re-queued run ran in the command


def visibility_timeout_for(time_limit):
    """Redis's visibility timeout as the settings derive it for CELERY_TASK_TIME_LIMIT=time_limit."""
    env = {key: value for key, value in os.environ.items() if key != "CELERY_TASK_TIME_LIMIT"}
    if time_limit is not None:
        env["CELERY_TASK_TIME_LIMIT"] = str(time_limit)
    code = "import config.settings as s; print(s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return int(out.stdout)


def test_a_lost_workers_tasks_come_back_to_the_broker_within_the_time_limit():
    """Redis gives an unacknowledged message to another worker after the visibility timeout: a
    little over the hard time limit (kombu's default, an hour, held the run's chunks that long)."""
    limit = django_settings.CELERY_TASK_TIME_LIMIT
    assert celery_app.conf.broker_transport_options["visibility_timeout"] == max(limit, 300) + 60
    assert visibility_timeout_for(None) == 3600 + 60  # the default limit, an hour
    assert visibility_timeout_for(900) == 900 + 60
    assert visibility_timeout_for(20) == 300 + 60  # never below MTurk's longest retry countdown
    for task in (
        tasks.compute_metrics,
        tasks.compute_metrics_chunk,
        tasks.adem_train_task,
        tasks.vhred_pretrain_task,
        tasks.adem_experiment_task,
    ):
        assert task.acks_late and task.reject_on_worker_lost, task.name
    assert celery_app.conf.task_soft_time_limit < celery_app.conf.task_time_limit


def test_beat_runs_the_watchdog_every_interval():
    celery_app.finalize()  # as a worker or beat does at start: the apps add their periodic tasks
    schedule = celery_app.conf.beat_schedule
    entries = {"scoring-recover-runs": "scoring.recover_runs", "analysis-recover-runs": "analysis.recover_runs"}
    for name, task in entries.items():
        assert schedule[name]["task"] == task
        assert schedule[name]["schedule"] == float(django_settings.RUN_WATCHDOG_SECONDS)
        assert schedule[name]["options"]["expires"] == float(django_settings.RUN_WATCHDOG_SECONDS)


def test_a_stall_shorter_than_three_heartbeats_stops_start_up_with_a_clear_message():
    result = manage("check", RUN_STALL_SECONDS="60", RUN_HEARTBEAT_SECONDS="30")
    assert result.returncode == 1
    assert "RUN_STALL_SECONDS=60 must be at least three heartbeats (3 x RUN_HEARTBEAT_SECONDS=30)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.django_db(transaction=True)  # the heartbeat's thread has a connection of its own
def test_a_task_stamps_its_runs_heartbeat_from_a_thread_while_it_works(researcher):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    run = MetricRun.objects.create(dataset=dataset, metrics=["bleu1"], status=MetricRun.Status.RUNNING)
    with heartbeat(MetricRun.objects.filter(pk=run.pk), interval=0.05):
        deadline = time.monotonic() + 10
        while MetricRun.objects.get(pk=run.pk).heartbeat_at is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the work, which never stamps anything itself
    stamped = MetricRun.objects.get(pk=run.pk).heartbeat_at
    assert stamped is not None and timezone.now() - stamped < timedelta(seconds=10)
    time.sleep(0.2)
    assert MetricRun.objects.get(pk=run.pk).heartbeat_at == stamped  # the thread stopped with the block


@pytest.mark.django_db  # the test's own transaction stays open, as a caller's atomic block would
def test_a_task_run_inside_its_callers_transaction_starts_no_heartbeat_that_could_only_fail(researcher, caplog):
    # On the tests' in-memory SQLite a beat beside the open transaction failed at once ("database table
    # is locked") and logged a warning with its traceback at every beat of a long test.
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    run = MetricRun.objects.create(dataset=dataset, metrics=["bleu1"], status=MetricRun.Status.RUNNING)
    with heartbeat(MetricRun.objects.filter(pk=run.pk), interval=0.02):
        time.sleep(0.2)
    assert not [record for record in caplog.records if record.name == "config.heartbeat"]
    assert MetricRun.objects.get(pk=run.pk).heartbeat_at is None
