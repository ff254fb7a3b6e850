"""Refreshing a report is an action on the study: its owner, a superuser or a holder of the manage
permission may queue it; staff without permissions read the report but get 404 on Refresh, as on
every other write, and see no Refresh button (security review 2026-11-29, informational note)."""

import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create
from tests.access.db_fingerprint import fingerprint
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db

RECORDS = [
    {"context_id": f"c{i}", "context": ["hello"], "responses": [{"system": "a", "text": "hi"}]} for i in range(3)
]


@pytest.fixture
def report(researcher):
    dataset = load_dataset_records(records=RECORDS, name="alice-refresh", owner=researcher)
    return report_get_or_create(dataset=dataset, params=report_params())


def refresh(client, report):
    return client.post(reverse("analysis:report_refresh", args=[report.pk]), {"next": "/"})


def test_staff_without_permission_may_not_queue_anothers_report_recomputation(client, staff, report):
    client.force_login(staff)
    before = fingerprint()
    assert refresh(client, report).status_code == 404
    assert fingerprint() == before
    assert Report.objects.get(pk=report.pk).requested_at is None


def test_another_researcher_gets_the_same_404(client, other_researcher, report):
    client.force_login(other_researcher)
    assert refresh(client, report).status_code == 404
    assert Report.objects.get(pk=report.pk).requested_at is None


@pytest.mark.parametrize("who", ["researcher", "admin_user", "manager"])
def test_the_owner_a_superuser_and_a_holder_of_the_permission_may_refresh(client, request, who, report):
    client.force_login(request.getfixturevalue(who))
    response = refresh(client, report)
    assert response.status_code == 302
    assert Report.objects.get(pk=report.pk).requested_at is not None


def test_staff_reading_anothers_report_see_no_refresh_button(client, staff, researcher, report, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    url = reverse("analysis:dataset_report", args=[report.dataset_id])
    client.force_login(staff)
    page = client.get(url)
    assert page.status_code == 200 and "report-refresh" not in page.text
    client.force_login(researcher)
    assert "report-refresh" in client.get(url).text
