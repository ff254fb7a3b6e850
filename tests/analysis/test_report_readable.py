"""The report page reads like a paper's tables, stays light, says when it is stale, and refreshes
without blocking; its downloads are safe to open in a spreadsheet and to name in a header."""

import io
import json
import re
import zipfile

import pandas as pd
import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.services import freshness
from analysis.services.exports import TABLES
from analysis.tasks.scheduling import report_is_stale, report_marker_changed
from annotation.models import Annotator, QualityReport, Rating
from annotation.quality.services import exclusion_override
from scoring.models import MetricScore

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]


@pytest.fixture(autouse=True)
def quick_bootstrap(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def computed(researcher_client, usr_study, django_capture_on_commit_callbacks):
    """The USR study's dataset report, computed (the queued task run as the embedded mode does)."""
    dataset = usr_study[0]
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(page_url(dataset))
    report = Report.objects.get(dataset=dataset, survey=None)
    assert report.status == Report.Status.READY
    return report


def page_url(dataset):
    return reverse("analysis:dataset_report", args=[dataset.pk])


def export_url(report, fmt, **query):
    url = reverse("analysis:report_export", args=[report.pk, fmt])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def section(body, name):
    match = re.search(rf'<section aria-labelledby="t-{name}">(.*?)</section>', body, re.S)
    assert match, f"no {name} table on the page"
    return match.group(1)


def test_tables_have_human_headers_rounded_cells_and_one_cell_per_interval(researcher_client, computed):
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    utterance = section(body, "utterance_level")
    headers = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', utterance)
    assert headers == ["Metric", "Pearson r", "95% CI", "p", "Spearman ρ", "95% CI", "p", "Kendall τ-b", "p", "n"]
    for raw in ("pearson_ci_low", "p_two_sided", "spearman_p", "human_mean"):
        assert raw not in body
    cells = re.findall(r'<td class="num">(.*?)</td>', utterance)
    assert any(re.fullmatch(r"\[-?\d\.\d{3}, -?\d\.\d{3}\]", cell) for cell in cells)
    rounded = re.compile(r"-?\d\.\d{3}|&lt;0\.001|\[-?\d\.\d{3}, -?\d\.\d{3}\]|\d+|–")
    assert all(rounded.fullmatch(cell) for cell in cells), cells
    # No long floats anywhere in the tables.
    assert not re.search(r">\s*-?\d+\.\d{4,}", body)
    assert "Each metric against the mean accepted human score" in utterance
    assert "50 resamples" in utterance


def test_per_system_means_have_systems_as_columns_and_metrics_as_rows(researcher_client, computed):
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    table = section(body, "systems")
    systems = [row["system"] for row in computed.data["systems"]]
    headers = re.findall(r'<th scope="col"[^>]*>(.*?)</th>', table)
    assert headers == ["Measure", *systems]
    row_labels = [label.replace("<wbr>", "") for label in re.findall(r'<th scope="row">(.*?)</th>', table)]
    assert row_labels == ["Responses (n)", "Human", *computed.data["metrics"]]


def test_williams_shows_the_best_metric_against_each_other_with_every_pair_behind_a_toggle(researcher_client, computed):
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    table = section(body, "williams")
    best = max(computed.data["utterance_level"], key=lambda row: row["pearson"])["metric"]
    assert f"does {best} correlate better than each other metric" in body
    compact, _, full = table.partition('<details class="full-table">')
    assert len(re.findall(r"<tbody>.*?</tbody>", compact, re.S)) == 1
    assert compact.count('<tr><th scope="row">') == len(computed.data["metrics"]) - 1
    assert "<summary>Show every pair (3)</summary>" in full
    assert full.count('<tr><th scope="row">') == len(computed.data["williams"]) == 3
    assert "Download Williams&#x27; test, every pair (CSV)" in table


def test_each_table_has_a_named_download_and_a_note_on_how_it_was_computed(researcher_client, computed):
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    assert "Download per-response correlations (CSV)" in body
    assert "Download per-system means (CSV)" in body
    assert "Download all tables (zip of CSVs and JSON)" in body
    system = section(body, "system_level")
    assert f"n = {computed.data['n_systems']} systems" in system and "Boot-Both" in system
    assert 'class="table-note"' in section(body, "systems") and "bootstrap" in section(body, "systems")


def test_zip_of_all_tables_holds_one_csv_per_table_that_pandas_reads(researcher_client, computed):
    response = researcher_client.get(export_url(computed, "zip"))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    assert sorted(archive.namelist()) == sorted([f"{name}.csv" for name in TABLES] + ["report.json", "README.txt"])
    utterance = pd.read_csv(archive.open("utterance_level.csv"))
    assert list(utterance["metric"]) == computed.data["metrics"]
    assert utterance["pearson"].dtype.kind == "f"
    for name in TABLES:
        frame = pd.read_csv(archive.open(f"{name}.csv"))
        assert len(frame.columns) > 1, name
    assert len(pd.read_csv(archive.open("williams.csv"))) == 3
    assert json.loads(archive.read("report.json"))["n_responses"] == 300


def test_csv_without_a_table_points_to_the_zip(researcher_client, computed):
    assert researcher_client.get(export_url(computed, "csv")).status_code == 404


def test_formula_cells_are_neutralised_in_every_analysis_csv(researcher_client, usr_study, computed):
    dataset = usr_study[0]
    hostile = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]
    response = MetricScore.objects.filter(response__context__dataset=dataset).first().response
    for i, name in enumerate(hostile):
        MetricScore.objects.bulk_create(
            [MetricScore(response=r, metric=name, version="1", value=float((r.pk * (i + 3)) % 7))
             for r in response.context.dataset.contexts.first().responses.all()] +
            [MetricScore(response=s.response, metric=name, version="1", value=float(s.response_id % 5))
             for s in MetricScore.objects.filter(response__context__dataset=dataset, metric="length")[10:200]]
        )  # fmt: skip
    Report.objects.filter(pk=computed.pk).update(checked_at=None)
    Annotator.objects.filter(pk=Rating.objects.filter(survey=usr_study[1]).first().annotator_id).update(
        worker_id="=cmd|' /C calc'!A0"
    )
    QualityReport.objects.filter(survey=usr_study[1]).delete()  # its cached tables name the old worker id
    computed.refresh_from_db()
    from analysis.services.build import report_refresh

    report_refresh(report=computed)
    # The real ids (the owner's download): the hostile worker id must reach the CSV neutralised.
    archive = zipfile.ZipFile(io.BytesIO(researcher_client.get(export_url(computed, "zip", ids="real")).content))
    seen = set()
    for name in TABLES:
        text = archive.read(f"{name}.csv").decode()
        for cell in pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False).to_numpy().ravel():
            assert not (cell[:1] in ("=", "+", "@", "\t", "\r") or re.match(r"-[^\d.]", cell)), (name, cell)
            if cell.startswith("'"):
                seen.add(cell)
    assert {'\'=HYPERLINK("http://x")', "'+1+1", "'-2+3", "'@SUM(A1)", "'\tcmd"} <= seen
    assert any(cell.startswith("'=cmd") for cell in seen)


@pytest.mark.parametrize("name", ['bleu4"; x=1', "evil\r\nSet-Cookie: a=b", "naïve ☃ data"])
def test_content_disposition_never_carries_a_raw_dataset_name(researcher_client, computed, name):
    computed.dataset.name = name
    computed.dataset.save()
    response = researcher_client.get(export_url(computed, "csv", table="williams"))
    assert response.status_code == 200
    header = response["Content-Disposition"]
    assert header.startswith("attachment; filename")
    assert header.count(";") == 1 and "\r" not in header and "\n" not in header and "x=1" not in header.split(";")[0]
    assert "Set-Cookie" not in response.headers


@pytest.mark.parametrize("metric", ['length"; x=1', "length\r\nX-Evil: 1", "nope"])
def test_plot_with_an_unknown_or_hostile_metric_is_a_404_not_a_header(researcher_client, computed, metric):
    from urllib.parse import quote

    url = reverse("analysis:report_plot", args=[computed.pk, "metric", "svg"])
    response = researcher_client.get(f"{url}?download=1&metric={quote(metric)}")
    assert response.status_code == 404 and "Content-Disposition" not in response
    human = reverse("analysis:report_plot", args=[computed.pk, "human", "svg"])
    response = researcher_client.get(f"{human}?download=1&metric={quote(metric)}")
    expected = f'attachment; filename="report-{computed.dataset.name}-human.svg"'
    assert response.status_code == 200 and response["Content-Disposition"] == expected


def test_a_metric_plots_download_is_named_after_the_dataset_and_metric_without_a_colon(researcher_client, computed):
    from urllib.parse import quote

    from analysis.services.build import report_refresh

    metric = "adem:demo"  # a learned metric's name carries a colon
    lengths = MetricScore.objects.filter(response__context__dataset=computed.dataset, metric="length")
    MetricScore.objects.bulk_create(
        [MetricScore(response_id=s.response_id, metric=metric, version="1", value=s.value) for s in lengths]
    )
    report_refresh(report=computed)
    assert metric in computed.data["metrics"]
    url = reverse("analysis:report_plot", args=[computed.pk, "metric", "png"])
    response = researcher_client.get(f"{url}?metric={quote(metric)}&download=1")
    assert response.status_code == 200
    expected = f"report-{computed.dataset.name}-metric-adem-demo.png"
    assert response["Content-Disposition"] == f'attachment; filename="{expected}"'
    inline = researcher_client.get(f"{url}?metric={quote(metric)}")  # the page's <img>: the same URL, no download
    assert inline.status_code == 200 and "Content-Disposition" not in inline


def test_an_exclusion_override_shows_a_recomputing_banner_and_stamps_exports_stale(
    researcher_client, researcher, usr_study, computed
):
    survey = usr_study[1]
    fresh = researcher_client.get(export_url(computed, "json"))
    assert fresh["X-RateLab-Report-Stale"] == "0" and json.loads(fresh.content)["stale"] is False
    annotator = Annotator.objects.get(pk=Rating.objects.filter(survey=survey).first().annotator_id)
    exclusion_override(survey=survey, annotator=annotator, excluded=True, note="spammer", user=researcher)
    # The queued recomputation is held back (the test's transaction never commits): the report stays old.
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    assert "Recomputing since" in body and 'data-status-url="' in body
    assert f"accepted {computed.data['inputs']['accepted']}" in body
    stale = researcher_client.get(export_url(computed, "json"))
    assert stale["X-RateLab-Report-Stale"] == "1"
    data = json.loads(stale.content)
    assert data["stale"] is True and data["stale_note"].startswith("STALE")
    # The real ids (the owner's download): the hostile worker id must reach the CSV neutralised.
    archive = zipfile.ZipFile(io.BytesIO(researcher_client.get(export_url(computed, "zip", ids="real")).content))
    assert archive.read("README.txt").decode().startswith("STALE")
    assert json.loads(archive.read("report.json"))["stale"] is True
    status = researcher_client.get(reverse("analysis:report_status", args=[computed.pk])).json()
    assert status["pending"] is True


def test_refresh_of_an_up_to_date_report_says_so_and_queues_nothing(researcher_client, computed):
    requested = Report.objects.get(pk=computed.pk).requested_at
    url = reverse("analysis:report_refresh", args=[computed.pk])
    response = researcher_client.post(url, {"next": page_url(computed.dataset)}, follow=True)
    assert "The report is up to date" in response.content.decode()
    assert Report.objects.get(pk=computed.pk).requested_at == requested


def test_a_report_computed_by_other_code_is_stale_and_refresh_recomputes_it(
    researcher_client, computed, monkeypatch, django_capture_on_commit_callbacks
):
    # An upgrade that changes how a figure is computed: same ratings, same scores, other code.
    assert computed.data["inputs"]["code"] == freshness._digest(freshness.report_code_version())[:8]
    monkeypatch.setattr(freshness, "report_code_version", lambda: "another-version")
    report = Report.objects.get(pk=computed.pk)
    assert report_is_stale(report) and report_marker_changed(report)
    url = reverse("analysis:report_refresh", args=[computed.pk])
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = researcher_client.post(url, {"next": page_url(computed.dataset)}, follow=True)
    assert "Recomputing the report" in response.content.decode() and len(queued) == 1


def test_the_code_version_follows_the_files_paths_and_contents(tmp_path):
    (tmp_path / "stats").mkdir()
    (tmp_path / "stats" / "mean.py").write_text("def mean(x): return sum(x) / len(x)\n")
    (tmp_path / "stats" / "notes.txt").write_text("not code")
    first = freshness.code_version_of(tmp_path, ["stats"])
    assert freshness.code_version_of(tmp_path, ["stats"]) == first
    (tmp_path / "stats" / "notes.txt").write_text("still not code")
    assert freshness.code_version_of(tmp_path, ["stats"]) == first
    (tmp_path / "stats" / "mean.py").write_text("def mean(x): return sum(x) / max(1, len(x))\n")
    changed = freshness.code_version_of(tmp_path, ["stats"])
    assert changed != first
    (tmp_path / "stats" / "deep").mkdir()
    (tmp_path / "stats" / "deep" / "more.py").write_text("")
    assert freshness.code_version_of(tmp_path, ["stats"]) not in (first, changed)


def test_refresh_after_a_change_queues_on_commit_and_returns_at_once(
    researcher_client, usr_study, computed, django_capture_on_commit_callbacks
):
    MetricScore.objects.filter(response__context__dataset=usr_study[0], metric="length").update(value=1.0)
    url = reverse("analysis:report_refresh", args=[computed.pk])
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = researcher_client.post(url, {"next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == page_url(computed.dataset)
    assert len(queued) == 1  # the computation waits for the commit, never runs in the request
    body = researcher_client.get(page_url(computed.dataset)).content.decode()
    assert "Recomputing the report" in body and "Recomputing since" in body


def test_status_and_refresh_are_the_owners_only(client, other_researcher, computed):
    client.force_login(other_researcher)
    assert client.get(reverse("analysis:report_status", args=[computed.pk])).status_code == 404
    assert client.post(reverse("analysis:report_refresh", args=[computed.pk])).status_code == 404
    assert client.get(reverse("analysis:report_table", args=[computed.pk, "williams"])).status_code == 404


def test_all_ratings_excluded_gives_one_explanation_not_a_wall_of_empty_tables(
    researcher_client, researcher, usr_study, django_capture_on_commit_callbacks
):
    dataset, survey = usr_study[0], usr_study[1]
    for annotator in Annotator.objects.filter(ratings__survey=survey).distinct():
        exclusion_override(survey=survey, annotator=annotator, excluded=True, note="test", user=researcher)
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(page_url(dataset))
    body = researcher_client.get(page_url(dataset)).content.decode()
    assert body.count("All 900 ratings were excluded by the quality rules") == 1
    assert "See Quality" in body and "No data for this table" not in body
    assert "exclusions=0" in body and "Per-response correlations" not in body and "Plots" not in body
    assert "Annotators" in body  # who was excluded, and why, stays visible
