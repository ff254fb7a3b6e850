"""A redelivered ADEM training takes over from a holder that has ended, at once, instead of waiting
for the watchdog; a duplicate while the holder lives never trains twice (security review
2026-11-29, point 7). The real worker with a killed pool process: test_training_worker_lost.py."""

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from config.runtime import heartbeat
from config.runtime.heartbeat import process_ended, process_identity
from scoring.models import TrainingRun
from scoring.services import liveness

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
ELSEWHERE = "another-host|0b0c7a51-0000-4000-8000-000000000000|pid:[4026531836]|4242|123456"


def ended_process_identity():
    """The identity of a process of this machine that has ended."""
    code = "from config.runtime.heartbeat import process_identity; print(process_identity())"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def held(*, worker, beat_seconds_ago=0.0):
    """A run as a task leaves it while it trains (or just after its process died): running, once
    started, its heartbeat `beat_seconds_ago` old."""
    run = TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, attempts=1)
    TrainingRun.objects.filter(pk=run.pk).update(
        status=TrainingRun.Status.RUNNING,
        worker=worker,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_seconds_ago),
        progress=[{"epoch": 1}],
    )
    return TrainingRun.objects.get(pk=run.pk)


@pytest.fixture
def no_waiting(monkeypatch):
    def refuse(seconds):
        raise AssertionError("the start waited for a heartbeat")

    monkeypatch.setattr(liveness.time, "sleep", refuse)


def test_this_process_and_an_ended_one_are_told_apart():
    mine = process_identity()
    assert process_ended(mine) is False
    assert process_ended(ended_process_identity()) is True
    machine, pid, start = mine.rsplit("|", 2)
    assert process_ended(f"{machine}|{pid}|{int(start) + 1}") is True  # the pid now another process's
    for unknown in (ELSEWHERE, "", "no-proc-host|123", "garbage"):
        assert process_ended(unknown) is None


@pytest.mark.parametrize("redelivered", [True, False])
def test_a_start_takes_over_at_once_from_a_holder_whose_process_has_ended(no_waiting, redelivered):
    run = held(worker=ended_process_identity())
    assert liveness.training_run_begin(run=run, holder=process_identity(), redelivered=redelivered)
    run.refresh_from_db()
    assert (run.status, run.attempts, run.worker, run.progress) == (
        TrainingRun.Status.RUNNING,
        2,
        process_identity(),
        [],
    )


def test_a_redelivered_start_is_dropped_at_once_while_the_holder_runs_on_this_machine(no_waiting):
    run = held(worker=process_identity())
    assert not liveness.training_run_begin(run=run, holder="someone-else", redelivered=True)
    run.refresh_from_db()
    assert (run.attempts, run.worker) == (1, process_identity())


def test_a_duplicate_for_a_holder_on_another_machine_is_dropped_at_once(no_waiting):
    run = held(worker=ELSEWHERE)
    assert not liveness.training_run_begin(run=run, holder=process_identity(), redelivered=False)
    assert TrainingRun.objects.get(pk=run.pk).attempts == 1


def test_a_redelivered_start_for_a_silent_holder_elsewhere_takes_over_once_its_heartbeat_is_two_beats_old(
    settings,
):
    settings.RUN_HEARTBEAT_SECONDS = 1
    run = held(worker=ELSEWHERE, beat_seconds_ago=1.5)
    assert liveness.training_run_begin(run=run, holder=process_identity(), redelivered=True)
    run.refresh_from_db()
    assert (run.attempts, run.worker) == (2, process_identity())


def test_a_redelivered_start_is_dropped_as_soon_as_the_holders_heartbeat_moves(settings, monkeypatch):
    settings.RUN_HEARTBEAT_SECONDS = 1
    run = held(worker=ELSEWHERE, beat_seconds_ago=0.5)

    def a_beat(seconds):  # the holder, alive on its machine, stamps its heartbeat meanwhile
        TrainingRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now())

    monkeypatch.setattr(liveness.time, "sleep", a_beat)
    assert not liveness.training_run_begin(run=run, holder=process_identity(), redelivered=True)
    run.refresh_from_db()
    assert (run.attempts, run.worker) == (1, ELSEWHERE)


def test_two_starts_after_one_death_claim_the_run_once(no_waiting):
    run = held(worker=ended_process_identity())
    stale_copy = TrainingRun.objects.get(pk=run.pk)
    assert liveness.training_run_begin(run=run, holder=process_identity())
    assert not liveness.training_run_begin(run=stale_copy, holder="second")
    assert TrainingRun.objects.get(pk=run.pk).attempts == 2


def test_without_proc_the_identity_names_only_host_and_pid_and_proves_nothing(monkeypatch):
    monkeypatch.setattr(heartbeat, "_machine", lambda: None)
    identity = process_identity()
    assert identity.count("|") == 1
    assert process_ended(identity) is None
