"""Quality control of a pairwise survey: agreement on the three labels (whatever side each
annotator saw), position bias per annotator, gold and swapped-repeat checks, on the quality page."""

import io
import json
import re

import pytest
from django.urls import reverse

from annotation import services
from annotation.kinds.pairwise.imports import pairwise_import
from annotation.kinds.pairwise.quality import fleiss_kappa, pairwise_quality
from annotation.models import Annotator, PairwiseJudgement
from annotation.quality.recompute import quality_recompute
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.studies_helpers import dataset_records
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _work(survey, worker, choose):
    assignment = services.assignment_claim(survey=survey, worker_id=worker)
    services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment, choose=choose))


def _better(item):
    # Agree on substance whichever side each saw: a fixed one of the two responses wins (the lower
    # id or the higher, by the parity of their sum, so the labels vary).
    first, second = sorted((item.response_id, item.response_b_id))
    winner = first if (first + second) % 2 else second
    return "a" if item.response_id == winner else "b"


def test_annotators_who_agree_on_substance_agree_perfectly_whatever_sides_they_saw(researcher):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=3)
    _work(survey, "w1", _better)
    _work(survey, "w2", _better)
    _work(survey, "lefty", lambda item: "a")
    figures = pairwise_quality(survey=survey)
    pairs = {(p["a"], p["b"]): p for p in figures["pairs"]}
    assert pairs[("w1", "w2")]["kappa"] == pytest.approx(1.0) and pairs[("w1", "w2")]["n"] == 18
    assert pairs[("lefty", "w1")]["kappa"] < 1.0
    by_worker = {row["worker"]: row for row in figures["annotators"]}
    assert by_worker["lefty"]["left_share"] == 1.0 and by_worker["lefty"]["p_value"] < 0.001
    assert by_worker["w1"]["gold_passed"] == by_worker["w1"]["gold_total"] == 1
    assert by_worker["w1"]["consistent"] == by_worker["w1"]["repeats"] == 1
    assert figures["fleiss_kappa"] is not None and figures["alpha"] is not None


def test_fleiss_kappa_is_one_for_unanimous_spread_items_and_none_without_spread():
    assert fleiss_kappa([[0, 0, 0], [2, 2, 2], [1, 1, 1]]) == pytest.approx(1.0)
    assert fleiss_kappa([[0, 0], [0, 0]]) is None
    assert fleiss_kappa([[0, 2], [2, 0]]) == pytest.approx(-1.0)


def test_the_quality_page_shows_the_pairwise_figures(researcher, researcher_client):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    _work(survey, "w1", _better)
    _work(survey, "w2", _better)
    quality_recompute(survey=survey)
    html = researcher_client.get(reverse("annotation:quality_survey", args=[survey.pk])).content.decode()
    assert "Pairwise judgements" in html and "Position bias and checks" in html and "Fleiss" in html
    # The checks by the names the annotator page uses (not the report's keys, "pair_gold"), and the
    # time per item over judgements, not "ratings".
    checks = html.split('id="attention"', 1)[1].split("<h2", 1)[0]
    assert "Pair with a broken reply (attention check)" in checks and "pair_gold" not in checks
    time_per_item = html.split('id="time"', 1)[1].split("</p>", 1)[0]
    assert "per judged pair" in time_per_item and "timed judgements" in time_per_item


def test_an_annotator_page_of_a_pairwise_survey_counts_judgements_and_choices(researcher, researcher_client):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    _work(survey, "w1", _better)
    _work(survey, "w2", _better)
    quality_recompute(survey=survey)
    w1 = Annotator.objects.get(worker_id="w1")
    html = researcher_client.get(reverse("annotation:quality_annotator", args=[survey.pk, w1.pk])).content.decode()
    n = PairwiseJudgement.objects.filter(survey=survey, annotator=w1).count()
    assert n > 0
    # Not "Ratings 0" with an empty 1-5 table: the judgements, and the choices they made.
    assert f"Judgements<strong>{n}</strong>" in html and "Ratings<strong>" not in html
    assert "Choices made" in html and "Scores given" not in html


def test_an_annotator_of_imported_pairwise_judgements_has_a_quality_page(researcher, researcher_client):
    # Imported work has no assignments; the quality page links every annotator, so none may be a 404.
    dataset = load_dataset_records(records=dataset_records(3, systems=("hred", "human")), name="ds", owner=researcher)
    lines = [
        {"context_id": f"c00{i}", "system_a": "hred", "system_b": "human", "worker": w, "winner": "b"}
        for i in range(3)
        for w in ("w1", "w2")
    ]
    survey = pairwise_import(
        file=io.BytesIO("".join(json.dumps(line) + "\n" for line in lines).encode()),
        dataset=dataset,
        owner=researcher,
        fmt="jsonl",
    )
    quality_recompute(survey=survey)
    w1 = Annotator.objects.get(worker_id="w1")
    quality = researcher_client.get(reverse("annotation:quality_survey", args=[survey.pk])).content.decode()
    url = reverse("annotation:quality_annotator", args=[survey.pk, w1.pk])
    assert url in quality
    response = researcher_client.get(url)
    assert response.status_code == 200
    assert "Judgements<strong>3</strong>" in response.content.decode()


def test_the_quality_index_names_a_pairwise_surveys_answers_and_marks_what_is_not_computed(
    researcher, researcher_client
):
    survey = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3)
    _work(survey, "w1", _better)
    _work(survey, "w2", _better)
    quality_recompute(survey=survey)
    n = PairwiseJudgement.objects.filter(survey=survey).count()
    pending = make_pairwise_survey(researcher, n_contexts=3, contexts_per_hit=3, name="pending")
    html = researcher_client.get(reverse("annotation:quality_index")).content.decode()
    row = html.split(f">{survey.name}</a>", 1)[1].split("</tr>", 1)[0]
    assert f'<td class="num" data-label="Ratings or judgements">{n} judgements</td>' in row
    # Not computed yet: a dash in every figure, no blank "Excluded" cell.
    row = html.split(f">{pending.name}</a>", 1)[1].split("</tr>", 1)[0]
    assert not re.search(r'<td class="num"[^>]*></td>', row) and row.count("–") == 3
