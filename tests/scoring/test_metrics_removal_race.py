"""A metrics run queued while its judge or ADEM model is being removed: the two take turns on the
judge's (model's) row, so either the run is refused or the removal is, and no run is ever left
naming a judge or model that is gone.

The race itself needs two connections that really wait on each other's row locks, so it runs on
PostgreSQL only:
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/ratelab_x \\
        pytest tests/scoring/test_metrics_removal_race.py
The SQLite tests put the removal in the window by hand: between the run's first check of its
metric names and its transaction.
"""

import threading
import time

import pytest
from django.db import connection, connections

from scoring.models import AdemModel, Judge, MetricRun
from scoring.services.adem.delete import adem_model_delete
from scoring.services.judges import remove as judge_remove
from scoring.services.judges.remove import JudgeBusy, judge_delete
from scoring.services.metrics import compute as services_metrics
from scoring.services.metrics import signatures as services_signatures
from scoring.services.metrics.compute import metrics_compute
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS

WAIT = 10  # seconds: a step that has not come by then never will


def _judge(owner):
    return Judge.objects.create(owner=owner, name="racer", base_url="http://127.0.0.1:9/v1", model="tiny-judge")


def _dangling_runs():
    """Runs naming a judge (or ADEM model) of their dataset's owner that no longer exists."""
    dangling = []
    for run in MetricRun.objects.select_related("dataset"):
        for metric in run.metrics:
            prefix, _, name = metric.partition(":")
            table = {"judge": Judge, "adem": AdemModel}.get(prefix)
            if table is not None and not table.objects.filter(owner=run.dataset.owner_id, name=name).exists():
                dangling.append((run.pk, metric))
    return dangling


# --- SQLite (and PostgreSQL): the removal lands between the run's checks and its transaction -------------


def _remove_before_the_transaction(monkeypatch, remove):
    """Run `remove` right after metrics_compute has checked its names, before its transaction."""
    real = services_metrics._dataset_response_ids

    def removed_meanwhile(dataset):
        remove()
        return real(dataset)

    monkeypatch.setattr(services_metrics, "_dataset_response_ids", removed_meanwhile)


@pytest.mark.django_db
def test_a_run_naming_a_judge_removed_after_its_checks_is_refused_as_an_unknown_judge(monkeypatch, researcher):
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    judge = _judge(researcher)
    _remove_before_the_transaction(monkeypatch, lambda: judge_delete(judge=judge))
    with pytest.raises(KeyError, match="no judge named 'racer'"):
        metrics_compute(dataset=dataset, metrics=["bleu4", "judge:racer"], dispatch=False)
    assert not MetricRun.objects.exists() and not Judge.objects.exists()


@pytest.mark.django_db
def test_a_run_naming_an_adem_model_deleted_after_its_checks_is_refused_as_an_unknown_model(
    monkeypatch, researcher, settings, tmp_path
):
    settings.RATELAB_DATA_DIR = tmp_path
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    model = AdemModel.objects.create(
        owner=researcher, dataset=dataset, name="racer", status=AdemModel.Status.READY, checkpoint_sha256="ab" * 32
    )
    _remove_before_the_transaction(monkeypatch, lambda: adem_model_delete(model=model))
    with pytest.raises(KeyError, match="no trained ADEM model for metric 'adem:racer'"):
        metrics_compute(dataset=dataset, metrics=["adem:racer"], dispatch=False)
    assert not MetricRun.objects.exists() and not AdemModel.objects.exists()


# --- PostgreSQL: two connections, one holding its lock while the other comes --------------------------------


def _waiting_on_a_lock():
    """Whether another connection to this database is waiting for a lock (a row lock here)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0] > 0


def _in_a_thread(work, outcome, key):
    def run():
        try:
            outcome[key] = work()
        except (KeyError, JudgeBusy) as refusal:
            outcome[key] = refusal
        finally:
            connections.close_all()  # this thread's connection

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _held(monkeypatch, module, attribute):
    """Patch `module.attribute` to stop, once called, until the returned `go` is set (its `reached`
    is set when it stops): the first side stops there holding its row lock."""
    real = getattr(module, attribute)
    reached, go = threading.Event(), threading.Event()

    def holding(*args, **kwargs):
        result = real(*args, **kwargs)
        reached.set()
        assert go.wait(WAIT)
        return result

    monkeypatch.setattr(module, attribute, holding)
    return reached, go


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("first", ["removal", "run"])
def test_a_run_and_a_removal_at_the_same_moment_take_turns_and_leave_no_run_naming_a_gone_judge(
    monkeypatch, researcher, first
):
    if connection.vendor != "postgresql":
        pytest.skip("two connections wait on each other's row locks only on PostgreSQL (DATABASE_URL=postgres://...)")
    dataset = load_dataset_records(records=RECORDS, name="toy", owner=researcher)
    judge = _judge(researcher)
    if first == "removal":
        # the removal stops after its busy check (nothing uses the judge yet), its row lock held
        reached, go = _held(monkeypatch, judge_remove, "judge_metrics_busy")
    else:
        # the run stops inside its transaction, after its names were checked, before it commits
        reached, go = _held(monkeypatch, services_signatures, "metric_signature")
    outcome = {}
    remove = lambda: judge_delete(judge=judge)  # noqa: E731
    compute = lambda: metrics_compute(dataset=dataset, metrics=["judge:racer"], dispatch=False)  # noqa: E731
    threads = [_in_a_thread(remove if first == "removal" else compute, outcome, first)]
    assert reached.wait(WAIT), outcome
    second = "run" if first == "removal" else "removal"
    threads.append(_in_a_thread(compute if first == "removal" else remove, outcome, second))
    # Let the second side reach the first's row lock and wait there (or finish, were there no lock).
    deadline = time.monotonic() + WAIT
    while threads[1].is_alive() and not _waiting_on_a_lock() and time.monotonic() < deadline:
        time.sleep(0.02)
    go.set()
    for thread in threads:
        thread.join(WAIT)
    assert not any(thread.is_alive() for thread in threads), outcome

    run_made = isinstance(outcome["run"], MetricRun)
    judge_gone = not Judge.objects.filter(pk=judge.pk).exists()
    assert run_made != judge_gone, outcome  # exactly one of the two went through
    if first == "removal":
        assert judge_gone and isinstance(outcome["run"], KeyError) and "no judge named 'racer'" in str(outcome["run"])
    else:
        assert run_made and isinstance(outcome["removal"], JudgeBusy)
        assert f"metrics run {outcome['run'].pk}, queued" in str(outcome["removal"])
    assert _dangling_runs() == []
