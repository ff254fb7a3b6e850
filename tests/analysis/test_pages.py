"""Report pages: login, owner isolation, exports, plots, the cached fast path and recomputation."""

import json

import pytest
from django.urls import reverse

from analysis.models import Report
from scoring.models import MetricScore
from tests.factories import load_rating_records

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


@pytest.fixture(autouse=True)
def quick_bootstrap(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 100
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYSIS_CHECK_SECONDS = 0  # check the inputs on every view (production: every 30 s)


@pytest.fixture
def researcher_client(researcher_client, django_capture_on_commit_callbacks):
    """Runs the on-commit callbacks (the queued Celery task, eager) that the test transaction holds back."""

    class Client:
        def get(self, *args, **kwargs):
            with django_capture_on_commit_callbacks(execute=True):
                return researcher_client.get(*args, **kwargs)

    return Client()


def page_url(dataset):
    return reverse("analysis:dataset_report", args=[dataset.pk])


def test_report_page_needs_login(client, usr_study):
    dataset = usr_study[0]
    response = client.get(page_url(dataset))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_report_page_says_computing_then_shows_the_owners_report(researcher_client, usr_study):
    dataset = usr_study[0]
    first = researcher_client.get(page_url(dataset))  # queues the task (run after the response here)
    assert first.status_code == 200 and "Computing…" in first.content.decode()
    response = researcher_client.get(page_url(dataset))
    assert response.status_code == 200
    body = response.content.decode()
    assert "overlap_f1_nostop" in body and "Human ceiling" in body and "Williams" in body
    report = Report.objects.get(dataset=dataset, survey=None)
    assert report.status == Report.Status.READY
    assert report.data["n_ratings"] == 900
    assert reverse("analysis:report_export", args=[report.pk, "latex"]) in body


def test_another_researcher_gets_404_for_page_exports_and_plots(client, other_researcher, researcher_client, usr_study):
    dataset, survey = usr_study[0], usr_study[1]
    researcher_client.get(page_url(dataset))
    report = Report.objects.get(dataset=dataset)
    client.force_login(other_researcher)
    assert client.get(page_url(dataset)).status_code == 404
    assert client.get(reverse("analysis:survey_report", args=[survey.pk])).status_code == 404
    assert client.get(reverse("analysis:report_export", args=[report.pk, "json"])).status_code == 404
    assert client.get(reverse("analysis:report_plot", args=[report.pk, "human", "png"])).status_code == 404


def test_staff_see_every_report(client, admin_user, usr_study):
    client.force_login(admin_user)
    assert client.get(page_url(usr_study[0])).status_code == 200


def test_survey_report_page_uses_only_that_survey(researcher_client, usr_study):
    survey = usr_study[1]
    response = researcher_client.get(reverse("analysis:survey_report", args=[survey.pk]))
    assert response.status_code == 200
    report = Report.objects.get(survey=survey)
    assert report.data["survey"] == survey.name
    assert report.data["filters"]["surveys"] == [survey.name]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("aspect=%3Cb%3Enope", "This dataset has no aspect &#x27;&lt;b&gt;nope&#x27;"),
        ("systems=no-such-system", "This dataset has no system &#x27;no-such-system&#x27;"),
    ],
)
def test_a_filter_naming_no_aspect_or_system_of_the_dataset_computes_nothing_and_says_so(
    researcher_client, usr_study, query, message
):
    # Each filter has a report of its own: a link with a made-up aspect must not start a computation.
    url = page_url(usr_study[0])
    response = researcher_client.get(f"{url}?{query}")
    assert response.status_code == 302 and response["Location"] == url
    assert not Report.objects.exists()
    page = researcher_client.get(response["Location"]).content.decode()
    assert message in page and Report.objects.count() == 1  # the report of every rating, as the page says


def test_a_survey_report_offers_only_that_surveys_aspects_and_refuses_another_surveys(researcher_client, usr_study):
    # Another survey of the same dataset rates topicality: the dataset's report has that aspect, the
    # first survey's report does not (it offered it, and computed an empty report for it).
    dataset, survey, ratings = usr_study[0], usr_study[1], usr_study[2]
    topical = [{**record, "aspect": "topicality"} for record in ratings[:30]]
    load_rating_records(records=topical, dataset=dataset, survey_name="usr-topicality", owner=survey.owner)
    url = reverse("analysis:survey_report", args=[survey.pk])
    page = researcher_client.get(url).content.decode()
    assert '<option value="overall"' in page and '<option value="topicality"' not in page
    response = researcher_client.get(f"{url}?aspect=topicality")
    assert response.status_code == 302 and response["Location"] == url
    assert not Report.objects.filter(params__aspect="topicality").exists()
    assert "This survey has no aspect &#x27;topicality&#x27;" in researcher_client.get(url).content.decode()
    dataset_page = researcher_client.get(f"{page_url(dataset)}?aspect=topicality")
    assert dataset_page.status_code == 200 and '<option value="topicality" selected' in dataset_page.content.decode()


def test_exports_download_json_csv_and_latex(researcher_client, usr_study):
    dataset = usr_study[0]
    researcher_client.get(page_url(dataset))
    report = Report.objects.get(dataset=dataset)
    data = json.loads(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "json"])).content)
    assert data["n_responses"] == 300
    csv_response = researcher_client.get(reverse("analysis:report_export", args=[report.pk, "csv"]) + "?table=williams")
    assert csv_response["Content-Type"].startswith("text/csv")
    assert csv_response.content.decode().splitlines()[0].startswith("a,b,r_a,r_b")
    latex = researcher_client.get(reverse("analysis:report_export", args=[report.pk, "latex"])).content.decode()
    assert r"\begin{tabular}{lrrrrrrr}" in latex  # with Kendall
    assert researcher_client.get(reverse("analysis:report_export", args=[report.pk, "exe"])).status_code == 404


def test_plots_render_as_png_and_svg_and_are_cached(researcher_client, usr_study, tmp_path):
    dataset = usr_study[0]
    researcher_client.get(page_url(dataset))
    report = Report.objects.get(dataset=dataset)
    png = researcher_client.get(reverse("analysis:report_plot", args=[report.pk, "metric", "png"]) + "?metric=length")
    assert png.status_code == 200 and png["Content-Type"] == "image/png" and png.content[:4] == b"\x89PNG"
    svg = researcher_client.get(reverse("analysis:report_plot", args=[report.pk, "system", "svg"]) + "?metric=length")
    assert svg.status_code == 200 and b"<svg" in svg.content
    human = researcher_client.get(reverse("analysis:report_plot", args=[report.pk, "human", "svg"]))
    assert human.status_code == 200
    assert len(list((tmp_path / "analysis" / "plots").rglob("*.*"))) == 3
    missing = researcher_client.get(reverse("analysis:report_plot", args=[report.pk, "metric", "png"]) + "?metric=nope")
    assert missing.status_code == 404


def test_cached_report_page_of_a_large_study_does_not_recompute_and_runs_few_queries(
    researcher_client, usr_study, django_assert_max_num_queries, settings
):
    """Above ANALYSIS_PAGE_CHECK_MAX_RATINGS the page leaves the input check to a periodic task
    (the page's time is measured in bench/bench_report.py, not asserted here)."""
    settings.ANALYSIS_CHECK_SECONDS = 30
    settings.ANALYSIS_PAGE_CHECK_MAX_RATINGS = 0
    dataset = usr_study[0]
    researcher_client.get(page_url(dataset))
    computed_at = Report.objects.get(dataset=dataset).computed_at
    # The first view of a computed report looks up the dataset's worker pseudonyms (3 queries: raters,
    # pairwise judges, assignment holders), cached for that computed report: the views after it run none.
    with django_assert_max_num_queries(17):
        researcher_client.get(page_url(dataset))
    # 12 for the page and its pipeline bar, 2 for the permission lookup that decides whether this user may change it.
    with django_assert_max_num_queries(14):
        response = researcher_client.get(page_url(dataset))
    assert response.status_code == 200 and "Recomputing" not in response.content.decode()
    assert Report.objects.get(dataset=dataset).computed_at == computed_at


def test_new_metric_scores_make_the_report_stale_and_it_is_recomputed(researcher_client, usr_study):
    dataset = usr_study[0]
    researcher_client.get(page_url(dataset))
    first = Report.objects.get(dataset=dataset)
    score = MetricScore.objects.filter(response__context__dataset=dataset, metric="length").first()
    MetricScore.objects.create(response=score.response, metric="constant_ish", version="1", value=1.0)
    MetricScore.objects.filter(response__context__dataset=dataset, metric="length").update(value=0.0)
    researcher_client.get(page_url(dataset))  # eager Celery: the task runs at once
    second = Report.objects.get(dataset=dataset)
    assert second.fingerprint != first.fingerprint
    assert "constant_ish" in second.data["metrics"]


def test_admin_changelists_link_to_the_reports(client, admin_user, usr_study):
    dataset = usr_study[0]
    client.force_login(admin_user)
    body = client.get(reverse("admin:annotation_dataset_changelist")).content.decode()
    assert page_url(dataset) in body


def test_a_failed_computation_is_shown_not_a_server_error(researcher_client, usr_study, monkeypatch, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True

    def broken(**kwargs):
        raise ValueError("metric vectors disagree")

    monkeypatch.setattr("analysis.services.build._compute", broken)
    dataset = usr_study[0]
    researcher_client.get(page_url(dataset))  # the eager task fails after the response
    response = researcher_client.get(page_url(dataset))
    assert response.status_code == 200
    assert "failed: metric vectors disagree" in response.content.decode()
    assert Report.objects.get(dataset=dataset).status == Report.Status.FAILED
