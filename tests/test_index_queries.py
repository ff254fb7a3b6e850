"""The top bar's list pages (Datasets, Metrics, Reports) cost the same few queries however many
datasets and surveys a researcher has: each row's owner, metric state and report state were read
one query per row (a researcher with 40 datasets and 80 surveys paid 120 queries on Reports)."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from analysis.models import Report
from analysis.report.report_keys import report_params
from annotation.models import Annotator, Dataset, Rating, Response, Survey
from scoring.models import MetricRun
from scoring.services.metrics.chunks import metric_chunk_compute
from scoring.services.metrics.compute import metrics_compute
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


def _state(page, name):
    match = re.search(rf">{re.escape(name)}</a></td>(?:<td[^>]*>[^<]*</td>)?<td>([^<]*)</td>", page)
    assert match, f"no row for {name}"
    return match.group(1).replace("\xa0", " ")  # timesince joins number and unit with a no-break space


def test_reports_index_says_out_of_date_when_ratings_or_scores_arrived_after_the_report(researcher_client, researcher):
    for index in range(2):
        _study(researcher, index)
    two_hours_ago = timezone.now() - timedelta(hours=2)
    Report.objects.update(status=Report.Status.READY, computed_at=two_hours_ago, params=report_params())
    surveys = {survey.name: survey for survey in Survey.objects.all()}
    rows = ("study-0", "survey-0", "study-1", "survey-1")

    def rate(survey, aspect="overall", when=None):
        response = Response.objects.get(context__dataset=survey.dataset)
        annotator = Annotator.objects.create(provider="link", worker_id=f"w{Annotator.objects.count()}")
        rating = Rating.objects.create(survey=survey, annotator=annotator, response=response, aspect=aspect, score=3)
        if when is not None:
            Rating.objects.filter(pk=rating.pk).update(created_at=when)

    rate(surveys["survey-0"], when=two_hours_ago - timedelta(minutes=5))  # read by the reports
    count, page = _queries(researcher_client, reverse("analysis:reports_index"))
    assert [_state(page, row) for row in rows] == ["computed 2 hours ago"] * 4
    rate(surveys["survey-1"], aspect="fluency")  # another aspect than the reports'
    rate(surveys["survey-0"], aspect="overall")
    again, page = _queries(researcher_client, reverse("analysis:reports_index"))
    stale = "computed 2 hours ago, out of date (ratings or scores changed since)"
    # survey-0's rating dates its survey's report and its dataset's, nothing of study-1
    assert [_state(page, row) for row in rows] == [stale, stale, "computed 2 hours ago", "computed 2 hours ago"]
    assert again == count  # the same grouped queries, none per row
    run = metrics_compute(dataset=Dataset.objects.get(name="study-1"), metrics=["response_len"], dispatch=False)
    for chunk in run.chunks.all():
        metric_chunk_compute(chunk=chunk)
    _, page = _queries(researcher_client, reverse("analysis:reports_index"))
    assert [_state(page, row) for row in rows] == [stale] * 4
    Report.objects.filter(dataset__name="study-1").update(checked_at=timezone.now())  # checked: same inputs
    _, page = _queries(researcher_client, reverse("analysis:reports_index"))
    assert [_state(page, row) for row in rows] == [stale, stale, "computed 2 hours ago", "computed 2 hours ago"]
