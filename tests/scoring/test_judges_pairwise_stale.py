"""Judging a dataset's pairs with an LLM judge makes its report stale, as computing a metric does:
the page notices and recomputes, so the judge shows without pressing Refresh."""

import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.models import Report
from analysis.services.freshness import report_change_marker
from analysis.tasks.scheduling import report_is_stale, report_marker_changed
from annotation.models import Dataset
from scoring.judges import prompts
from tests.scoring.judge_helpers import make_judge
from tests.scoring.test_judges_pairwise_study import picks_the_good_reply, study  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick_reports(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path


def _page(client, dataset, capture):
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    with capture(execute=True):
        client.get(url)
    return client.get(url).content.decode()


@pytest.mark.usefixtures("quick_reports")
def test_judging_the_pairs_makes_the_report_stale_and_the_page_shows_the_judge_without_refresh(
    study,  # noqa: F811
    researcher,
    researcher_client,
    chat_server,
    django_capture_on_commit_callbacks,
):
    chat_server.answer = picks_the_good_reply
    make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    before = _page(researcher_client, study, django_capture_on_commit_callbacks)
    report = Report.objects.get(dataset=study)
    assert "oracle" not in before and not report_is_stale(report) and not report_marker_changed(report)

    call_command("judge_pairs", "--judge", "oracle", "--dataset", "ab")

    report.refresh_from_db()
    assert report_is_stale(report) and report_marker_changed(report)
    after = _page(researcher_client, study, django_capture_on_commit_callbacks)
    assert '<th scope="row">oracle</th><td class="num">1.000</td><td class="num">6</td>' in after
    report.refresh_from_db()
    assert not report_is_stale(report)


@pytest.mark.usefixtures("quick_reports")
def test_a_pairwise_judges_answers_leave_the_report_of_a_dataset_without_pairs_alone(researcher, chat_server):
    dataset = Dataset.objects.create(name="plain", owner=researcher)
    marker = report_change_marker(dataset=dataset)
    judge = make_judge(researcher, chat_server, name="pairs", template=prompts.PAIRWISE)
    judge.cache_entries.create(template_version="v", prompt_hash="h", values=["A"])
    assert report_change_marker(dataset=dataset) == marker
