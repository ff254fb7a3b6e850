"""LLM judges in the report: as metrics in every table, as raters (kappa), and their length bias."""

import csv
import io

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats
from sklearn.metrics import cohen_kappa_score

from analysis.services.build import report_build
from analysis.stats.judges import judge_kappas, length_correlations, round_to_scale
from annotation.models import Annotator, Rating, Response
from annotation.services.extensions.score_display import score_label
from scoring.models import MetricScore
from tests.factories import load_dataset_records, load_rating_records

pytestmark = pytest.mark.django_db

WORKERS = ("w1", "w2", "w3")


def human_score(i, worker):
    """Annotators who mostly agree (quality control would exclude random ones): w3 one point off now and then."""
    base = 1 + (i * 7) % 5
    return min(5, base + 1) if worker == "w3" and i % 4 == 0 else base


@pytest.fixture
def judged_study(researcher):
    """30 contexts x 2 systems rated by three annotators; a judge that gives each response the
    rounded human mean (judge:mean) and one that scores by length (judge:long)."""
    records = [
        {
            "context_id": f"k{i}",
            "context": ["hello", f"question {i}?"],
            "references": ["an answer"],
            "responses": [
                {"system": "short", "text": "ok"},
                {"system": "long", "text": " ".join(["word"] * (3 + i % 9))},
            ],
        }
        for i in range(30)
    ]
    dataset = load_dataset_records(records=records, name="judged", owner=researcher)
    ratings = [
        {"context_id": f"k{i}", "system": system, "worker": worker, "score": human_score(2 * i + s, worker)}
        for i in range(30)
        for s, system in enumerate(("short", "long"))
        for worker in WORKERS
    ]
    load_rating_records(records=ratings, dataset=dataset, survey_name="judged-survey", owner=researcher)
    rows = []
    for response in Response.objects.filter(context__dataset=dataset).select_related("context", "system"):
        i = int(response.context.external_id[1:])
        s = 0 if response.system.name == "short" else 1
        mean = np.mean([human_score(2 * i + s, w) for w in WORKERS])
        rows.append(MetricScore(response=response, metric="judge:mean", version="t", value=float(np.floor(mean + 0.5))))
        rows.append(
            MetricScore(response=response, metric="judge:long", version="t", value=min(5.0, len(response.text.split())))
        )
    MetricScore.objects.bulk_create(rows)
    return dataset


def test_judges_appear_as_metrics_in_every_table_of_the_report(judged_study):
    data = report_build(dataset=judged_study, n_boot=20)
    assert {"judge:mean", "judge:long"} <= set(data["metrics"])
    assert {"judge:mean", "judge:long"} <= {row["metric"] for row in data["utterance_level"]}
    assert {"judge:mean", "judge:long"} <= {row["metric"] for row in data["system_level"]}
    assert {"judge:mean", "judge:long"} <= {row["measure"] for row in data["length_bias"]["rows"]}
    assert any("judge:mean" in (row["a"], row["b"]) for row in data["williams"])
    assert score_label("judge:Qwen-7B") == "Judge Qwen-7B"


def test_a_judge_giving_the_rounded_human_mean_has_kappa_one_against_it(judged_study):
    section = report_build(dataset=judged_study, n_boot=0)["judges"]
    rows = {row["judge"]: row for row in section["agreement"]}
    assert rows["judge:mean"]["kappa_mean"] == pytest.approx(1.0)
    assert rows["judge:mean"]["n"] == 60
    assert len(rows["judge:mean"]["annotators"]) == 3
    # against each annotator: sklearn's kappa of that annotator's scores and the judge's
    w1 = [human_score(k, "w1") for k in range(60)]
    judged = [int(np.floor(np.mean([human_score(k, w) for w in WORKERS]) + 0.5)) for k in range(60)]
    expected = cohen_kappa_score(w1, judged, labels=[1, 2, 3, 4, 5])
    by_worker = {row["annotator"]: row for row in rows["judge:mean"]["annotators"]}
    assert by_worker["w1"]["kappa"] == pytest.approx(expected)


def test_length_bias_correlates_each_judge_and_the_humans_with_response_length(judged_study):
    section = report_build(dataset=judged_study, n_boot=0)["judges"]
    rows = {row["measure"]: row for row in section["length"]}
    assert set(rows) == {"human", "judge:mean", "judge:long"}
    responses = Response.objects.filter(context__dataset=judged_study).order_by("pk")
    lengths = [len(r.text.split()) for r in responses]
    long_scores = [min(5.0, n) for n in lengths]
    assert rows["judge:long"]["spearman"] == pytest.approx(scipy_stats.spearmanr(lengths, long_scores).statistic)
    assert rows["judge:long"]["pearson"] > rows["human"]["pearson"]


def test_the_report_page_shows_the_judges_section_and_the_csv_exports_it(
    researcher_client, judged_study, settings, django_capture_on_commit_callbacks
):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    url = reverse("analysis:dataset_report", args=[judged_study.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    page = researcher_client.get(url).content.decode()
    assert 'id="judges-section"' in page and "LLM judges as raters" in page and "judge:long" in page
    # judge:long's p-values of length bias are tiny: written "<0.001" as in every other table, never "0.000"
    length_table = page.split('id="judge-length"', 1)[1].split("</table>", 1)[0]
    assert "&lt;0.001" in length_table and ">0.000<" not in length_table
    report = judged_study.reports.get()
    csv_text = researcher_client.get(
        reverse("analysis:report_export", args=[report.pk, "csv"]) + "?table=judge_agreement"
    ).content.decode()
    rows = list(csv.DictReader(io.StringIO(csv_text.split("\n", 1)[1] if csv_text.startswith("#") else csv_text)))
    assert {row["judge"] for row in rows} == {"judge:mean", "judge:long"}


def test_a_report_without_judges_has_no_judges_section(researcher):
    dataset = load_dataset_records(
        records=[{"context_id": "a", "context": ["x"], "references": [], "responses": [{"system": "s", "text": "y"}]}],
        name="plain",
        owner=researcher,
    )
    assert report_build(dataset=dataset, n_boot=0)["judges"] == {}


# --- the pure statistics ---------------------------------------------------------------------------


def test_round_to_scale_rounds_half_up_and_clips():
    assert round_to_scale([2.5, 3.49, 0.2, 7.0]).tolist() == [3.0, 3.0, 1.0, 5.0]


def test_judge_kappas_leave_out_undefined_scores_and_annotators_with_few_items():
    judge = np.array([1, 2, np.nan, 4, 5, 3, 2])
    human = np.array([1, 2, 3, 4, 5, 3, 1.6])
    result = judge_kappas(judge, human, {"few": [(0, 1), (1, 2)], "many": [(i, int(human[i] + 0.5)) for i in range(7)]})
    assert result["n"] == 6 and result["kappa_mean"] == pytest.approx(1.0)
    assert [row["annotator"] for row in result["annotators"]] == ["many"]
    assert result["annotators"][0]["n"] == 6


def test_judge_kappas_skip_annotators_rating_on_another_scale():
    judge = np.array([1.0, 2, 3, 4, 5, 1])
    result = judge_kappas(judge, judge, {"seven-point": [(i, 7) for i in range(6)]})
    assert result["annotators"] == [] and result["median_kappa_annotators"] is None


def test_length_correlations_ignore_undefined_scores():
    rows = length_correlations([1, 2, 3, 4, 5], {"judge:x": [1, 2, np.nan, 4, 5]})
    assert rows[0]["n"] == 4 and rows[0]["pearson"] == pytest.approx(1.0)


def test_two_annotators_sharing_a_worker_id_across_providers_are_both_held_against_the_judge(judged_study):
    # w3's ratings moved to a local annotator also called w1: two annotators, one bare worker id.
    local_w1 = Annotator.objects.create(provider="local", worker_id="w1")
    Rating.objects.filter(annotator__worker_id="w3").update(annotator=local_w1)
    section = report_build(dataset=judged_study, n_boot=0)["judges"]
    row = next(row for row in section["agreement"] if row["judge"] == "judge:mean")
    labels = sorted(one["annotator"] for one in row["annotators"])
    assert len(labels) == 3 and "local:w1" in labels and all(one["n"] == 60 for one in row["annotators"])
