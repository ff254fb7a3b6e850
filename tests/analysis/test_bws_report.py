"""The report's `bws` section on a simulated best-worst study: per system the counting score (checked
against the stored judgements directly), the Bradley-Terry strength with its interval, split-half
reliability, metric correlations, and the section's CSV, LaTeX and page."""

import collections
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.models import Report
from analysis.services.exports import to_latex
from analysis.services.freshness import report_change_marker, report_input_parts
from annotation.models import BWSJudgement, Response
from scoring.models import MetricScore
from tests.annotation.bws_helpers import SIX_SYSTEMS, make_bws_survey

pytestmark = pytest.mark.django_db
QUALITY = dict(zip(SIX_SYSTEMS, (0.95, 0.8, 0.6, 0.4, 0.2, 0.05), strict=True))


@pytest.fixture
def bws_report(researcher, researcher_client, settings, django_capture_on_commit_callbacks):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    survey = make_bws_survey(researcher, n_contexts=8, contexts_per_hit=4, assignments_per_hit=3, name="bws-rep")
    scores = []
    for response in Response.objects.filter(context__dataset=survey.dataset).select_related("system"):
        quality = QUALITY[response.system.name] + (response.pk % 7) / 100
        response.meta = {"demo_quality": quality}
        response.save(update_fields=["meta"])
        scores.append(MetricScore(response=response, metric="follows_quality", version="t", value=quality))
        scores.append(MetricScore(response=response, metric="against_quality", version="t", value=-quality))
    MetricScore.objects.bulk_create(scores)
    call_command("simulate_ratings", survey.name, "--annotators", "6", stdout=io.StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(reverse("analysis:dataset_report", args=[survey.dataset.pk]))
    report = Report.objects.get(dataset=survey.dataset, survey=None)
    assert report.status == Report.Status.READY, report.error
    return survey, report


def test_each_system_has_its_counting_score_strength_and_interval(bws_report):
    survey, report = bws_report
    section = report.data["bws"]
    best, worst, shown = collections.Counter(), collections.Counter(), collections.Counter()
    system = dict(Response.objects.filter(context__dataset=survey.dataset).values_list("pk", "system__name"))
    judgements = BWSJudgement.objects.filter(survey=survey)
    for judgement in judgements:
        best[system[judgement.best_id]] += 1
        worst[system[judgement.worst_id]] += 1
        shown.update(system[pk] for pk in judgement.responses)
    rows = {row["system"]: row for row in section["systems"]}
    assert set(rows) == set(SIX_SYSTEMS)
    for name, row in rows.items():
        assert set(row) >= {"system", "count_score", "n", "strength", "ci_low", "ci_high"}
        assert row["n"] == shown[name]
        assert row["count_score"] == pytest.approx((best[name] - worst[name]) / shown[name])
        assert row["ci_low"] <= row["strength"] <= row["ci_high"]
    assert [row["system"] for row in section["systems"]] == list(SIX_SYSTEMS), "best first, as the qualities say"
    assert section["n_judgements"] == judgements.count()
    assert section["reliability"]["spearman_brown"] > 0.5
    metrics = {row["metric"]: row for row in section["metrics"]}
    assert metrics["follows_quality"]["spearman"] > 0.5 > metrics["against_quality"]["spearman"]


def test_the_section_is_in_the_json_csv_latex_and_page(bws_report, researcher_client):
    _, report = bws_report
    exported = json.loads(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "json"])).content)
    assert exported["bws"]["systems"][0]["system"] == "hred"
    csv_text = researcher_client.get(
        reverse("analysis:report_export", args=[report.pk, "csv"]) + "?table=bws_systems"
    ).content.decode()
    assert csv_text.splitlines()[0] == "system,count_score,n,strength,ci_low,ci_high,best,worst"
    assert len(csv_text.splitlines()) == 1 + len(SIX_SYSTEMS)
    latex = to_latex(report.data)
    assert "tab:bws" in latex and "Count score" in latex and "Split-half reliability" in latex
    page = researcher_client.get(reverse("analysis:dataset_report", args=[report.dataset.pk])).content.decode()
    assert 'id="t-bws"' in page and 'href="#t-bws"' in page and "Split-half reliability" in page
    assert "accepted best-worst judgements over 6 systems and 8 contexts" in page
    assert "No ratings or pairwise judgements yet" not in page


def test_a_new_judgement_makes_the_report_stale(bws_report):
    survey, _ = bws_report
    before = report_input_parts(dataset=survey.dataset), report_change_marker(dataset=survey.dataset)
    judgement = BWSJudgement.objects.filter(survey=survey).first()
    judgement.pk = None
    judgement.item = None
    judgement.save()
    after = report_input_parts(dataset=survey.dataset), report_change_marker(dataset=survey.dataset)
    assert before[0]["bws"] != after[0]["bws"] and before[1] != after[1]
