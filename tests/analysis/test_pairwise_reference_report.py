"""The reference as a side in the report: the Bradley-Terry ranking names it, the metrics' pairwise
accuracy leaves its judgements out and says so, and nothing of the rating analyses or the metric
engine sees the reference pseudo-system."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from analysis.services.build import report_build
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.kinds.pairwise.references import reference_system_ensure
from annotation.models import REFERENCE_SYSTEM_NAME, Response
from annotation.services.imports import ratings_import
from scoring.models import MetricScore
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db
QUALITY = {REFERENCE_SYSTEM_NAME: 3.0, "good": 2.0, "okay": 1.0, "bad": 0.0}
N_CONTEXTS = 30


def _judgements(rng):
    lines = []
    for c in range(N_CONTEXTS):
        for a, b in (
            ("good", "okay"),
            ("okay", "bad"),
            ("good", REFERENCE_SYSTEM_NAME),
            ("bad", REFERENCE_SYSTEM_NAME),
        ):
            for worker in ("w1", "w2"):
                winner = "a" if rng.random() < 1 / (1 + np.exp(QUALITY[b] - QUALITY[a])) else "b"
                lines.append(
                    {"context_id": f"c{c:03d}", "system_a": a, "system_b": b, "worker": worker, "winner": winner}
                )
    return lines


@pytest.fixture
def study(researcher):
    systems = ("good", "okay", "bad")
    dataset = load_dataset_records(records=dataset_records(N_CONTEXTS, systems=systems), name="pw", owner=researcher)
    lines = _judgements(np.random.default_rng(5))
    survey = pairwise_import(
        file="".join(json.dumps(x) + "\n" for x in lines).encode(), dataset=dataset, fmt="jsonl", survey_name="pw-ab"
    )
    for response in Response.objects.filter(context__dataset=dataset).select_related("system"):
        MetricScore.objects.create(response=response, metric="oracle", value=QUALITY[response.system.name])
    return dataset, survey


def _report(**options):
    out = io.StringIO()
    call_command("report", dataset="pw", bootstrap=100, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def test_the_ranking_names_the_reference_and_the_metrics_leave_its_judgements_out(study):
    pairwise = json.loads(_report(format="json"))["pairwise"]
    ranked = [row["system"] for row in pairwise["systems"]]
    assert ranked[0] == REFERENCE_SYSTEM_NAME and set(ranked) == set(QUALITY)
    assert pairwise["reference"] == REFERENCE_SYSTEM_NAME
    assert pairwise["n_judgements"] == N_CONTEXTS * 4 * 2
    assert pairwise["n_reference_judgements"] == N_CONTEXTS * 2 * 2
    oracle = next(row for row in pairwise["metrics"] if row["metric"] == "oracle")
    assert oracle["n_pairs"] == N_CONTEXTS * 2 * 2, "only the judgements of two real systems are scored"
    assert oracle["kendall_vs_bt"] == pytest.approx(1.0), "the reference has no place in the metric's ranking"
    assert "cannot score the reference against itself" in pairwise["metrics_note"]
    assert any(REFERENCE_SYSTEM_NAME in (r["system"], r["opponent"]) for r in pairwise["matrix"])
    assert f"\n{REFERENCE_SYSTEM_NAME}," in _report(format="csv", table="pairwise_systems")


def test_the_report_page_labels_the_reference_row_and_notes_the_left_out_pairs(study, page_client):
    url = reverse("analysis:dataset_report", args=[study[0].pk])
    page_client(url)  # computes the report (eager task on commit)
    html = page_client(url).content.decode()
    assert '<th scope="row">reference (gold)</th>' in html
    assert html.index('<th scope="row">reference (gold)</th>') < html.index('<th scope="row">good</th>')
    assert 'id="pairwise-metrics-note"' in html and "cannot score the reference against itself" in html


def test_the_rating_analyses_never_include_the_reference_system(researcher):
    dataset = load_dataset_records(records=dataset_records(12, systems=("good", "bad")), name="rt", owner=researcher)
    ratings = [
        {"context_id": f"c{c:03d}", "system": system, "worker": worker, "score": score}
        for c in range(12)
        for system, score in (("good", 4 + c % 2), ("bad", 1 + c % 3))
        for worker in ("w1", "w2")
    ]
    ratings_import(file="".join(json.dumps(r) + "\n" for r in ratings).encode(), dataset=dataset, fmt="jsonl")
    for response in Response.objects.filter(context__dataset=dataset).select_related("system"):
        MetricScore.objects.create(response=response, metric="oracle", value=len(response.system.name))
    before = report_build(dataset=dataset, n_boot=50)
    reference_system_ensure(dataset=dataset)
    after = report_build(dataset=dataset, n_boot=50)
    assert (
        [row["system"] for row in after["systems"]] == [row["system"] for row in before["systems"]] == ["bad", "good"]
    )
    assert after["n_responses"] == before["n_responses"] == 24
    assert after["utterance_level"] == before["utterance_level"]


def test_metrics_score_the_same_responses_and_values_whether_or_not_a_reference_system_exists(researcher):
    records = dataset_records(8, systems=("good", "bad"))
    for i, record in enumerate(records):
        record["references"] = [f"a reply about topic {i % 3}", "another reference"]
    plain = load_dataset_records(records=records, name="plain", owner=researcher)
    with_reference = load_dataset_records(records=records, name="with-ref", owner=researcher)
    reference_system_ensure(dataset=with_reference)
    values = {}
    for dataset in (plain, with_reference):
        call_command(
            "compute_metrics", dataset=dataset.name, metric=["bleu1", "cider"], no_progress=True, stdout=io.StringIO()
        )
        rows = MetricScore.objects.filter(response__context__dataset=dataset).values_list(
            "response__context__external_id", "response__system__name", "metric", "value"
        )
        values[dataset.name] = sorted(rows)
    assert len(values["plain"]) == 8 * 2 * 2
    assert values["with-ref"] == values["plain"], "CIDEr's document frequencies leave the reference copies out"
