"""The top bar's list pages (Datasets, Metrics, Reports) cost the same few queries however many
datasets and surveys a researcher has: each row's owner, metric state and report state were read
one query per row (a researcher with 40 datasets and 80 surveys paid 120 queries on Reports)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from analysis.models import Report
from annotation.models import Survey
from scoring.models import MetricRun
from tests.factories import load_dataset_records


def _study(owner, index):
    records = [{"context_id": "c1", "context": ["hi"], "responses": [{"system": "s", "text": "hello"}]}]
    dataset = load_dataset_records(records=records, name=f"study-{index}", owner=owner)
    survey = Survey.objects.create(dataset=dataset, owner=owner, name=f"survey-{index}", status=Survey.Status.LIVE)
    MetricRun.objects.create(dataset=dataset, metrics=["bleu4"], versions={"bleu4": "1"}, status=MetricRun.Status.DONE)
    Report.objects.create(
        dataset=dataset, survey=survey, params_hash=f"h{index}", status=Report.Status.READY, computed_at=timezone.now()
    )
    Report.objects.create(dataset=dataset, params_hash=f"d{index}", status=Report.Status.PENDING)


def _queries(client, url):
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    return len(captured.captured_queries), response.content.decode()


@pytest.mark.parametrize("url_name", ["annotation:dataset_list", "scoring:metrics_index", "analysis:reports_index"])
def test_list_pages_read_each_kind_of_row_once_whatever_the_number_of_studies(researcher_client, researcher, url_name):
    _study(researcher, 0)
    url = reverse(url_name)
    few, _ = _queries(researcher_client, url)
    for index in range(1, 6):
        _study(researcher, index)
    many, page = _queries(researcher_client, url)
    assert "study-5" in page and "study-0" in page
    assert many == few, f"{few} queries for one study, {many} for six"


def test_reports_index_states_stay_per_dataset_and_per_survey(researcher_client, researcher):
    _study(researcher, 0)
    _, page = _queries(researcher_client, reverse("analysis:reports_index"))
    # the dataset's own report is still computing; the survey's is done
    assert "computing…" in page
    assert "computed just now" in page
