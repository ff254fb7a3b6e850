"""The report's human-score options (issue 40): per-worker z-scores and MACE / Dawid-Skene
competence-weighted means, checked against the same figures computed here by hand on the tiny study of
test_report_population (4 annotators rate every response of 6 contexts x 3 systems; w4, careless, is
excluded by hand), and the page, JSON and exports saying which weighting they use."""

import json
import re
import statistics

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from analysis.models import Report
from analysis.report.inputs import report_inputs
from analysis.report.population import population_text
from analysis.services.build import report_build
from analysis.services.exports import to_latex
from annotation.models import Response
from annotation.quality.integrity.dawid_skene import dawid_skene
from annotation.quality.integrity.mace import mace
from annotation.quality.integrity.ordinal_spammer import ordinal_spammer
from annotation.quality.weighting import evenly_spaced
from tests.analysis import test_report_population as population

kept = population.kept
tiny = population.tiny  # the fixture

pytestmark = pytest.mark.django_db


def _response_ids(dataset):
    return {
        (r.context.external_id, r.system.name): r.pk
        for r in Response.objects.filter(context__dataset=dataset).select_related("context", "system")
    }


def _hand_zscores(rows):
    """Each worker's ratings standardised by their own mean and population sd, then averaged per response."""
    by_worker = {}
    for r in rows:
        by_worker.setdefault(r["worker"], []).append(r["score"])
    z = {}
    for r in rows:
        values = by_worker[r["worker"]]
        mean, sd = sum(values) / len(values), statistics.pstdev(values)
        z.setdefault((r["context_id"], r["system"]), []).append((r["score"] - mean) / sd)
    return {key: sum(v) / len(v) for key, v in z.items()}


def _hand_weighted(rows, weights):
    sums, totals = {}, {}
    for r in rows:
        key = (r["context_id"], r["system"])
        sums[key] = sums.get(key, 0.0) + weights[r["worker"]] * r["score"]
        totals[key] = totals.get(key, 0.0) + weights[r["worker"]]
    return {key: sums[key] / totals[key] for key in sums}


def _as_vector(inputs, expected, ids):
    by_pk = {ids[key]: value for key, value in expected.items()}
    return np.array([by_pk[pk] for pk in inputs.response_ids.tolist()])


@pytest.mark.parametrize("apply_exclusions", [True, False])
def test_zscored_human_scores_match_a_hand_computation(tiny, apply_exclusions):
    dataset, _ = tiny
    rows = kept(None, apply_exclusions)
    inputs = report_inputs(dataset=dataset, apply_exclusions=apply_exclusions, weighting="zscore")
    expected = _as_vector(inputs, _hand_zscores(rows), _response_ids(dataset))
    assert np.allclose(inputs.human, expected, atol=1e-12)
    assert inputs.counts.sum() == len(rows)


@pytest.mark.parametrize("weighting", ["mace", "dawid_skene", "ordinal"])
def test_competence_weighted_human_scores_match_a_hand_computation(tiny, weighting):
    dataset, _ = tiny
    rows = kept(None, True)
    triples = [(r["worker"], (r["context_id"], r["system"]), r["score"]) for r in rows]
    labels = sorted({r["score"] for r in rows})
    if weighting == "ordinal":  # the whole scale between the lowest and highest score given, in steps of 1
        weights = ordinal_spammer(triples, labels=list(range(labels[0], labels[-1] + 1))).competence
    else:
        weights = (mace if weighting == "mace" else dawid_skene)(triples, labels=labels).competence
    assert len({round(w, 6) for w in weights.values()}) > 1, "the weights differ, so the test can tell"
    inputs = report_inputs(dataset=dataset, weighting=weighting)
    expected = _as_vector(inputs, _hand_weighted(rows, weights), _response_ids(dataset))
    assert np.allclose(inputs.human, expected, atol=1e-9)
    plain = report_inputs(dataset=dataset)
    assert not np.allclose(inputs.human, plain.human)  # the weighting changed the scores


def test_the_ordinal_weighting_reads_the_scale_between_the_scores_given():
    assert evenly_spaced([1.0, 2.0, 4.0, 5.0]) == [1.0, 2.0, 3.0, 4.0, 5.0]  # nobody gave 3: it stays between
    assert evenly_spaced([0.0, 50.0, 100.0]) == [0.0, 50.0, 100.0]
    assert evenly_spaced([1.0, 2.0, 4.5]) == [1.0, 2.0, 4.5]  # not evenly spaced: ordered positions


def test_the_report_computes_its_figures_on_the_weighted_scores_and_says_so(tiny):
    dataset, _ = tiny
    data = report_build(dataset=dataset, n_boot=0, options={"weighting": "zscore"})
    assert data["options"]["weighting"] == "zscore" and data["filters"]["weighting"] == "zscore"
    text = population_text(data)
    assert "human score per response: mean of per-worker z-scores" in text
    assert "split-half ceiling and the agreement figures stay on the raw ratings" in text
    assert text in to_latex(data)
    inputs = report_inputs(dataset=dataset, weighting="zscore")
    length = inputs.metrics["length"]
    row = next(r for r in data["utterance_level"] if r["metric"] == "length")
    assert row["pearson"] == pytest.approx(stats.pearsonr(inputs.human, length).statistic, abs=1e-9)
    hand = _as_vector(inputs, _hand_zscores(kept(None, True)), _response_ids(dataset))
    assert row["spearman"] == pytest.approx(stats.spearmanr(hand, length).statistic, abs=1e-9)
    plain = report_build(dataset=dataset, n_boot=0)
    assert "human score per response: plain mean of the ratings" in population_text(plain)


def test_the_page_offers_the_weighting_and_its_json_says_which_it_used(
    researcher_client, tiny, django_capture_on_commit_callbacks
):
    dataset, _ = tiny
    url = reverse("analysis:dataset_report", args=[dataset.pk]) + "?aspect=overall&weighting=mace"
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert re.search(r'<option value="mace" selected>', body)
    meta = re.search(r'<p class="report-meta" id="report-population">(.*?)</p>', body, re.S).group(1)
    assert "weighted by each worker&#x27;s competence from MACE" in meta or "competence from MACE" in meta
    report = Report.objects.get(dataset=dataset, params__options__weighting="mace")
    exported = json.loads(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "json"])).content)
    assert exported["filters"]["weighting"] == "mace" and "MACE" in exported["population"]
