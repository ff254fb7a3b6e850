"""The report page stays light on a large study; the Report admin is read-only and links to the page;
plots keep jittered human scores on the rating scale."""

import re

import numpy as np
import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.report import plots
from bench.synthetic_study import build_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def large_study(settings, tmp_path):
    """10,000 ratings by 200 annotators (12,000+ annotator pairs), 2,000 responses, 15 metrics."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    settings.MEDIA_ROOT = tmp_path
    return build_study(n_ratings=10_000, n_responses=2_000, n_metrics=15, n_annotators=200)


def test_report_page_of_a_large_study_is_under_500_kb_with_long_tables_cut_and_shown_in_full_elsewhere(
    client, large_study, django_capture_on_commit_callbacks
):
    dataset, owner = large_study
    client.force_login(owner)
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        client.get(url)
    body = client.get(url).content.decode()
    assert len(body.encode()) < 500_000, len(body.encode())
    report = Report.objects.get(dataset=dataset)
    n_pairs = len(report.data["agreement"]["pairs"])
    assert n_pairs > 10_000
    assert f"First 25 of {n_pairs:,} rows" in body or f"First 25 of {n_pairs} rows" in body
    full = reverse("analysis:report_table", args=[report.pk, "agreement_pairs"])
    assert full in body
    second = client.get(full + "?page=2").content.decode()
    assert "Rows 501–1000 of" in second and second.count('<tr><th scope="row">') == 500
    every_pair = client.get(reverse("analysis:report_table", args=[report.pk, "williams"])).content.decode()
    assert every_pair.count('<tr><th scope="row">') == len(report.data["williams"]) == 105


def test_report_admin_offers_no_add_shows_rounded_seconds_and_links_to_the_page(client, admin_user, large_study):
    dataset, _ = large_study
    report = Report.objects.create(
        dataset=dataset, params={}, params_hash="x" * 64, status=Report.Status.READY, seconds=0.5147078869999859
    )
    client.force_login(admin_user)
    changelist = client.get(reverse("admin:analysis_report_changelist")).content.decode()
    assert reverse("admin:analysis_report_add") not in changelist
    assert "0.5 s" in changelist and "0.5147" not in changelist
    assert reverse("analysis:dataset_report", args=[dataset.pk]) in changelist
    assert client.get(reverse("admin:analysis_report_add")).status_code == 403
    change = client.get(reverse("admin:analysis_report_change", args=[report.pk])).content.decode()
    assert not re.search(r'<(input|select)[^>]+name="(status|computed_at|seconds|requested_at)', change)
    posted = client.post(reverse("admin:analysis_report_change", args=[report.pk]), {"status": "failed"})
    assert posted.status_code == 403
    assert Report.objects.get(pk=report.pk).status == Report.Status.READY


def test_jittered_human_scores_stay_on_the_rating_scale():
    human = np.repeat([1.0, 1.5, 3.0, 4.5, 5.0], 2000)
    values = plots.jittered(human, np.random.default_rng(0))
    assert values.min() >= 1.0 and values.max() <= 5.0
    assert values.std() > 0  # still jittered
