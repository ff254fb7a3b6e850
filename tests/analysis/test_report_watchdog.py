"""A report whose computation was lost with its worker is computed again, or fails saying why
(the watchdog of analysis/tasks/recovery.py; eager Celery)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from analysis.models import Report
from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create
from analysis.tasks import recovery as watchdog
from analysis.tasks.report import report_check_task, report_refresh_task
from analysis.tasks.scheduling import report_pending
from config.celery import app as celery_app

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


@pytest.fixture(autouse=True)
def watchdog_settings(settings, monkeypatch):
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.RUN_STALL_SECONDS = 60
    settings.RUN_MAX_ATTEMPTS = 3


def lost_report(dataset, *, attempts, seconds=120):
    """A report whose requested computation started `attempts` times, the last `seconds` ago, and died."""
    report = report_get_or_create(dataset=dataset, params=report_params())
    then = timezone.now() - timedelta(seconds=seconds)
    Report.objects.filter(pk=report.pk).update(requested_at=then, heartbeat_at=then, attempts=attempts)
    report.refresh_from_db()
    return report


def test_a_report_whose_worker_died_is_computed_again(usr_study):
    report = lost_report(usr_study[0], attempts=1)
    assert report_pending(report)

    assert watchdog.reports_recover()["requeued"] == [report.pk]

    report.refresh_from_db()
    assert (report.status, report.error, report.attempts) == (Report.Status.READY, "", 0)
    assert report.data["n_responses"] == 300
    assert not report_pending(report)


def test_a_report_lost_too_often_fails_saying_why(usr_study):
    report = lost_report(usr_study[0], attempts=3)

    assert watchdog.reports_recover()["failed"] == [report.pk]

    report.refresh_from_db()
    assert report.status == Report.Status.FAILED
    assert report.error.startswith("The computation of this report was started 3 times and never finished")
    assert report.data is None


def test_a_report_being_computed_or_just_requested_is_left_alone(usr_study):
    report = lost_report(usr_study[0], attempts=1, seconds=10)
    assert watchdog.reports_recover() == {"requeued": [], "finished": [], "failed": []}
    report.refresh_from_db()
    assert report.data is None and report.attempts == 1


def test_a_redelivered_computation_past_its_starts_fails_instead_of_running(usr_study):
    report = lost_report(usr_study[0], attempts=3)
    report_refresh_task.apply(args=(report.pk,), throw=True)
    report.refresh_from_db()
    assert report.status == Report.Status.FAILED and "started 3 times" in report.error


def test_report_tasks_come_back_when_their_worker_dies():
    for task in (report_refresh_task, report_check_task):
        assert task.acks_late and task.reject_on_worker_lost, task.name
