"""The report of a pairwise study: `report --format json` carries the Bradley-Terry ranking, the
win/tie/loss matrix and each metric's agreement with the human pairs; CSV and LaTeX carry the
same tables; exclusions apply as in rating studies."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.models import Report
from analysis.services.build import report_build
from analysis.views import report as report_views
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.kinds.pairwise.selectors import judged_pairs
from annotation.models import Annotator, ExclusionDecision, Response, Survey
from scoring.models import MetricScore
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db
QUALITY = {"good": 2.0, "okay": 1.0, "bad": 0.0}


@pytest.fixture
def study(researcher):
    dataset = load_dataset_records(records=dataset_records(30, systems=tuple(QUALITY)), name="pw", owner=researcher)
    rng = np.random.default_rng(3)
    lines = []
    for c in range(30):
        for a, b in (("good", "okay"), ("okay", "bad"), ("good", "bad")):
            for worker in ("w1", "w2"):
                p = 1 / (1 + np.exp(QUALITY[b] - QUALITY[a]))
                u = rng.random()
                winner = "a" if u < 0.9 * p else ("b" if u > 1 - 0.9 * (1 - p) else "tie")
                first, second = (a, b) if rng.random() < 0.5 else (b, a)
                if (first, second) != (a, b):
                    winner = {"a": "b", "b": "a", "tie": "tie"}[winner]
                lines.append(
                    {"context_id": f"c{c:03d}", "system_a": first, "system_b": second, "worker": worker,
                     "winner": winner}
                )  # fmt: skip
    survey = pairwise_import(
        file="".join(json.dumps(x) + "\n" for x in lines).encode(), dataset=dataset, fmt="jsonl", survey_name="pw-ab"
    )
    # The two simulated judges draw every answer independently, so they agree only by chance
    # (kappa about 0): the default kappa rule, which the report applies, would exclude both.
    Survey.objects.filter(pk=survey.pk).update(kappa_threshold=-1.0)
    survey.refresh_from_db()
    # "oracle" orders every pair by true quality; "reverse" the other way round.
    for response in Response.objects.filter(context__dataset=dataset).select_related("system"):
        MetricScore.objects.create(response=response, metric="oracle", value=QUALITY[response.system.name])
        MetricScore.objects.create(response=response, metric="reverse", value=-QUALITY[response.system.name])
    return dataset, survey


def _report(*args, **options):
    out = io.StringIO()
    call_command("report", *args, dataset="pw", bootstrap=100, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def test_the_json_report_ranks_the_systems_and_scores_the_metrics_against_the_pairs(study):
    pairwise = json.loads(_report(format="json"))["pairwise"]
    assert [row["system"] for row in pairwise["systems"]] == ["good", "okay", "bad"]
    for row in pairwise["systems"]:
        assert set(row) == {"system", "strength", "ci_low", "ci_high", "wins", "losses", "ties"}
        assert row["ci_low"] <= row["strength"] <= row["ci_high"]
    assert sum(row["strength"] for row in pairwise["systems"]) == pytest.approx(0, abs=1e-9)
    assert sum(row["wins"] + row["losses"] + row["ties"] for row in pairwise["systems"]) == 2 * 180
    metrics = {row["metric"]: row for row in pairwise["metrics"]}
    assert set(metrics["oracle"]) == {"metric", "pairwise_accuracy", "n_pairs", "kendall_vs_bt"}
    assert set(pairwise) >= {"systems", "matrix", "metrics"}
    assert metrics["oracle"]["n_pairs"] == 180 and metrics["oracle"]["kendall_vs_bt"] == pytest.approx(1.0)
    assert metrics["reverse"]["kendall_vs_bt"] == pytest.approx(-1.0)
    assert metrics["oracle"]["pairwise_accuracy"] > 0.6 > metrics["reverse"]["pairwise_accuracy"]
    good_vs_bad = next(r for r in pairwise["matrix"] if (r["system"], r["opponent"]) == ("good", "bad"))
    assert good_vs_bad["ci_low"] < good_vs_bad["win_rate"] < good_vs_bad["ci_high"]


def test_csv_and_latex_carry_the_pairwise_tables(study):
    csv_text = _report(format="csv", table="pairwise_systems")
    assert csv_text.splitlines()[0] == "system,strength,ci_low,ci_high,wins,losses,ties"
    assert csv_text.splitlines()[1].startswith("good,")
    assert "pairwise_accuracy" in _report(format="csv", table="pairwise_metrics")
    latex = _report(format="latex")
    assert "tab:pairwise-ranking" in latex and "tab:pairwise-metrics" in latex


def test_the_terminal_summary_of_a_pairwise_study_is_the_ranking_as_a_table(study):
    lines = _report(format="summary").splitlines()
    assert lines[0] == (
        "pw: Bradley-Terry ranking from 180 pairwise judgements (ties count half; 95% bootstrap interval)"
    )
    assert lines[1].split() == ["system", "strength", "95%", "CI", "wins", "ties", "losses"]
    pairwise = json.loads(_report(format="json"))["pairwise"]
    rows = [line.split() for line in lines[3:]]
    assert [row[0] for row in rows] == ["good", "okay", "bad"]
    for row, record in zip(rows, pairwise["systems"], strict=True):
        assert row[1] == f"{record['strength']:.2f}"  # two decimals, not the CSV's seventeen digits
        assert row[-3:] == [str(record["wins"]), str(record["ties"]), str(record["losses"])]
    assert "pearson" not in "\n".join(lines)  # no empty correlation table for a study without ratings


def test_an_excluded_annotators_judgements_leave_the_ranking(study, researcher):
    dataset, survey = study
    ExclusionDecision.objects.create(
        survey=survey, annotator=Annotator.objects.get(worker_id="w2"), excluded=True, source="manual",
        note="test", decided_by=researcher,
    )  # fmt: skip
    pairwise = json.loads(_report(format="json"))["pairwise"]
    assert pairwise["n_judgements"] == 90
    assert len(judged_pairs(dataset=dataset)) == 90
    assert len(judged_pairs(dataset=dataset, apply_exclusions=False)) == 180


def test_a_dataset_without_pairwise_judgements_has_no_pairwise_section(researcher):
    load_dataset_records(records=dataset_records(3), name="pw", owner=researcher)
    assert json.loads(_report(format="json"))["pairwise"] is None


def test_the_report_page_shows_the_ranking_the_metrics_and_a_ranking_plot(study, page_client, client, other_researcher):
    dataset, _ = study
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    page_client(url)
    html = page_client(url).content.decode()
    assert "Pairwise ranking (Bradley-Terry)" in html and "Kendall τ vs BT" in html
    # The report of a pairwise study has something to show: no "No ratings yet" above its ranking,
    # and its summary line counts the judgements it ranks.
    assert 'id="report-empty"' not in html
    assert "180 accepted pairwise judgements (180 before exclusions) over 3 systems and 30 contexts;" in html
    # A study with judgements and no ratings: no "0 responses, 0 accepted ratings …, 0 systems" beside its ranking.
    assert "0 accepted ratings" not in html and " 0 systems" not in html
    # A report cached before the count existed says nothing rather than "(0 before exclusions)".
    cached = Report.objects.get(dataset=dataset)
    del cached.data["filters"]["n_judgements_before_exclusions"]
    cached.save(update_fields=["data"])
    report_views._SCRUBBED.clear()  # the page's per-process copy of the report's data
    page = client.get(url).content.decode()  # (page_client's login)
    assert "180 accepted pairwise judgements over 3 systems" in page
    assert html.index('<th scope="row">good</th>') < html.index('<th scope="row">bad</th>')
    assert '<th scope="col" class="num">Rank</th>' in html  # right-aligned over its right-aligned numbers
    report = Report.objects.get(dataset=dataset)
    plot = page_client(reverse("analysis:report_plot", args=[report.pk, "pairwise", "png"]))
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"
    client.force_login(other_researcher)
    assert client.get(reverse("analysis:report_plot", args=[report.pk, "pairwise", "png"])).status_code == 404


def test_the_reports_systems_filter_applies_to_the_pairwise_section(study):
    dataset, _ = study
    pairwise = report_build(dataset=dataset, systems=["good", "bad"], n_boot=0)["pairwise"]
    assert [row["system"] for row in pairwise["systems"]] == ["good", "bad"]
    assert pairwise["n_judgements"] == 30 * 2  # only good-vs-bad pairs, two workers per context


def test_a_pairwise_report_with_every_judgement_excluded_says_so(study, page_client):
    _, survey = study
    Survey.objects.filter(pk=survey.pk).update(kappa_threshold=0.99)  # both simulated judges fall below it
    page_client(reverse("analysis:survey_report", args=[survey.pk]))  # queues the report (eager: computed now)
    html = page_client(reverse("analysis:survey_report", args=[survey.pk])).content.decode()
    empty = html.split('id="report-empty">', 1)[1].split("</p>", 1)[0]
    assert empty.startswith("All 180 pairwise judgements were excluded by the quality rules")
    assert "exclusions=0" in empty and "No ratings yet" not in html


def test_the_survey_page_of_a_pairwise_study_offers_no_planning_of_ratings(study, researcher_client):
    # The planning panel sizes 1-5 ratings per response: on a pairwise survey it said "how many more
    # ratings?" and "Needs accepted ratings" beside 180 judgements.
    _, survey = study
    body = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode()
    assert "180" in body and "planning-title" not in body
