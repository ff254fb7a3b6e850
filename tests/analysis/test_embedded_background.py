"""Embedded mode (no broker): the report page answers while its report is computed on the web
process's background threads (config/runtime/background.py), then shows it ready."""

import threading

import pytest
from django.urls import reverse

import analysis.services.build
from analysis.models import Report
from annotation.quality.selectors import survey_quality

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.shared_data]


@pytest.fixture
def held_computation(settings, monkeypatch):
    """Holds the report's computation until the test opens the gate: (opened, entered) events."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    opened, entered = threading.Event(), threading.Event()
    real = analysis.services.build._compute

    def held(**kwargs):
        entered.set()
        assert opened.wait(30), "the test never opened the gate"
        return real(**kwargs)

    monkeypatch.setattr(analysis.services.build, "_compute", held)
    yield opened, entered
    opened.set()


def test_the_report_page_answers_while_its_report_is_computed_in_the_background(
    client, researcher, usr_study, embedded_background, held_computation
):
    dataset = usr_study[0]
    # Quality is brought up to date first: otherwise the background thread writes the quality report
    # while this request's pipeline bar reads it, and the tests' in-memory SQLite (shared cache, unlike
    # the WAL file of the embedded mode) answers "table is locked" instead of waiting.
    survey_quality(survey=usr_study[1])
    opened, entered = held_computation
    client.force_login(researcher)
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    try:
        first = client.get(url)
        assert first.status_code == 200
        assert entered.wait(30), "the computation never started on the background pool"
        report = Report.objects.get(dataset=dataset, survey=None)
        assert report.data is None and report.status == Report.Status.PENDING
    finally:
        opened.set()
    embedded_background()
    report.refresh_from_db()
    assert report.status == Report.Status.READY and report.data["n_ratings"] == 900
    assert client.get(url).status_code == 200
