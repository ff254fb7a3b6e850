"""The survey's exclusion rules judge pairwise annotators as they judge raters: kappa on the
three labels taken by response, the minimum time per item, the attention policy, and researcher
overrides; the pairwise report then leaves the excluded out."""

import pytest
from django.urls import reverse

from analysis.sections.pairwise import pairwise_section
from annotation import services
from annotation.models import Annotator, ExclusionDecision
from annotation.quality.recompute import quality_recompute
from annotation.quality.report import dataset_report
from annotation.quality.services import exclusion_override
from annotation.quality.whatif import excluded_under, settings_of, stored_evidence
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = pytest.mark.django_db


def _better(item):
    # The careful annotators agree on substance (a fixed one of the two responses wins).
    first, second = sorted((item.response_id, item.response_b_id))
    winner = first if (first + second) % 2 else second
    return "a" if item.response_id == winner else "b"


@pytest.fixture
def study(researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=4,
        kappa_threshold=0.2, min_seconds_per_item=1.0,
    )  # fmt: skip
    for worker in ("w1", "w2", "w3"):
        assignment = services.assignment_claim(survey=survey, worker_id=worker)
        services.assignment_submit(assignment=assignment, answers=pairwise_answers(assignment, choose=_better))
    # The careless one picks the other reply every time: random picks on a 3-context survey (whose
    # HITs are laid out afresh each run) landed above the kappa threshold by chance now and then.
    assignment = services.assignment_claim(survey=survey, worker_id="careless")
    answers = pairwise_answers(assignment, choose=lambda item: "b" if _better(item) == "a" else "a", seconds=0.2)
    services.assignment_submit(assignment=assignment, answers=answers)
    return survey


def _counts(survey, apply_exclusions=True):
    section = pairwise_section(dataset=survey.dataset, n_boot=20, apply_exclusions=apply_exclusions)
    return section["n_judgements"], sum(row["wins"] + row["losses"] + row["ties"] for row in section["systems"])


def test_a_careless_fast_pairwise_annotator_is_excluded_by_kappa_and_by_time(study):
    report = quality_recompute(survey=study).data
    by_worker = {entry["worker"]: entry for entry in report["annotators"]}
    careless = by_worker["careless"]
    assert careless["excluded"] and careless["source"] == "auto"
    assert {reason["rule"] for reason in careless["reasons"]} == {"kappa", "speed"}
    assert careless["kappa_judged"] < 0.2 and careless["median_seconds"] == pytest.approx(0.2)
    assert not any(by_worker[w]["excluded"] for w in ("w1", "w2", "w3"))
    assert by_worker["w1"]["kappa_judged"] == pytest.approx(1.0)
    decision = ExclusionDecision.objects.get(survey=study, annotator__worker_id="careless")
    assert decision.excluded and decision.source == ExclusionDecision.Source.AUTO
    assert report["n_excluded"] == 1 and report["task_type"] == "pairwise"


def test_the_sensitivity_audit_judges_pairwise_annotators_with_the_same_rules(study):
    report = quality_recompute(survey=study).data
    stored = stored_evidence(report)
    careless = Annotator.objects.get(worker_id="careless").pk
    assert excluded_under(stored, settings_of(study)) == {careless}
    # With the rules off, nobody is left out; with the time rule alone, the fast one still is.
    off = settings_of(study).varied(kappa_threshold=None, min_seconds_per_item=None)
    assert excluded_under(stored, off) == set()
    assert excluded_under(stored, off.varied(min_seconds_per_item=1.0)) == {careless}


def test_the_pairwise_report_leaves_the_excluded_annotator_out_and_an_override_brings_them_back(study, researcher):
    everyone = _counts(study, apply_exclusions=False)
    quality_recompute(survey=study)
    without = _counts(study)
    careless = Annotator.objects.get(worker_id="careless")
    per_annotator = study.pairwise_judgements.filter(annotator=careless, aspect="overall").count()
    assert without[0] == everyone[0] - per_annotator and without[1] == without[0] * 2
    exclusion_override(survey=study, annotator=careless, excluded=False, note="checked by hand", user=researcher)
    report = quality_recompute(survey=study).data
    entry = next(e for e in report["annotators"] if e["worker"] == "careless")
    assert not entry["excluded"] and entry["source"] == "manual" and entry["auto_excluded"]
    assert _counts(study) == everyone


def test_the_quality_page_says_which_rule_excluded_the_pairwise_annotator(study, researcher_client):
    quality_recompute(survey=study)
    html = researcher_client.get(reverse("annotation:quality_survey", args=[study.pk])).content.decode()
    excluded = html.split('id="excluded"', 1)[1].split("</table>", 1)[0]
    assert "careless" in excluded and "kappa, speed" in excluded and "below 1 s" in excluded
    assert 'id="pairwise-rules"' in html and "Krippendorff's alpha (nominal)" in html
    assert "Split-half" not in html  # it correlates mean 1-5 scores, which a pairwise survey has not


def test_the_dataset_wide_agreement_leaves_pairwise_kappas_out_of_the_rating_scale_figures(study):
    stored = quality_recompute(survey=study).data
    assert stored["pairs"]  # the survey's own report has its pairwise kappas
    combined = dataset_report([study], [stored])
    assert combined["pairs"] == [] and combined["median_kappa"] is None


def test_a_report_read_before_any_quality_recompute_still_leaves_the_excluded_out(study):
    # Nothing has recomputed the survey's quality since the judgements arrived (with eager Celery
    # nothing is queued: reads bring it up to date, as they do for ratings).
    careless = Annotator.objects.get(worker_id="careless")
    assert not ExclusionDecision.objects.filter(survey=study).exists()
    per_annotator = study.pairwise_judgements.filter(annotator=careless, aspect="overall").count()
    assert _counts(study)[0] == _counts(study, apply_exclusions=False)[0] - per_annotator
    assert ExclusionDecision.objects.get(survey=study, annotator=careless).excluded
