"""The pairwise filter-sensitivity audit: the pairwise rules re-decided under other settings, the
systems ranked and the metrics' pairwise accuracy computed again on the judgements kept.

A pairwise survey collected through the real claim and submit path: three careful annotators, and
"lefty", who always picks the left reply and answers swapped repeats inconsistently. The survey's
position-bias rule excludes lefty; turning it off brings exactly lefty back.
"""

import numpy as np
import pytest
from django.urls import reverse

from analysis.models import Report
from analysis.sections.pairwise import OUTCOME
from analysis.sections.pairwise_sensitivity import pairwise_sensitivity_table
from analysis.services.build import report_build
from analysis.services.exports import table
from analysis.stats.pairwise import bradley_terry, tie_calibrated_accuracy, win_counts
from annotation.models import ExclusionDecision, PairwiseJudgement, QualityReport, Response, Survey
from annotation.quality.recompute import quality_recompute
from scoring.models import MetricScore
from tests.annotation.collected import build_collected_survey
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.test_pairwise_rules import _always_left_and_careless_on_repeats, _in_turn, _submit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]
CAREFUL = ("w1", "w2", "w3")


@pytest.fixture
def survey(researcher):
    survey = make_pairwise_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=4, kappa_threshold=-1.0,
        max_position_bias=0.3, min_position_judgements=10, min_repeat_consistency=None, min_repeats=1,
    )  # fmt: skip
    # Careful annotators pick left and right in turn: picking by substance, their share of left
    # picks would follow the random layout and could cross the position bound (see test_pairwise_rules).
    for worker in CAREFUL:
        _submit(survey, worker, lambda assignment: pairwise_answers(assignment, choose=_in_turn()))
    _submit(survey, "lefty", _always_left_and_careless_on_repeats)
    quality_recompute(survey=survey)
    responses = Response.objects.filter(context__dataset=survey.dataset)
    MetricScore.objects.bulk_create(
        MetricScore(response=response, metric="by_id", version="t", value=float(response.pk % 7))
        for response in responses
    )
    return survey


def by_setting(section):
    return {row["setting"]: row for row in section["settings"]}


def _judgements(survey, workers):
    return PairwiseJudgement.objects.filter(survey=survey, aspect="overall", annotator__worker_id__in=workers)


def test_the_study_row_keeps_what_the_report_ranks_and_turning_the_position_rule_off_brings_lefty_back(survey):
    data = report_build(dataset=survey.dataset, n_boot=0)
    settings = by_setting(data["pairwise_sensitivity"])
    assert settings["study"]["n_annotators"] == 3
    assert settings["study"]["n_judgements"] == data["pairwise"]["n_judgements"] == _judgements(survey, CAREFUL).count()
    assert settings["study"]["order"] == [row["system"] for row in data["pairwise"]["systems"]]
    everyone = _judgements(survey, (*CAREFUL, "lefty")).count()
    assert (settings["position=None"]["n_annotators"], settings["position=None"]["n_judgements"]) == (4, everyone)
    # the other rules do not touch lefty: the position rule alone keeps them out
    for key in ("kappa=None", "repeats=None", "attention=exclude", "min_seconds=None"):
        assert settings[key]["n_annotators"] == 3, key


def test_a_settings_ranking_and_accuracy_equal_a_direct_computation_on_the_kept_judgements(survey):
    section = report_build(dataset=survey.dataset, n_boot=0)["pairwise_sensitivity"]
    settings = by_setting(section)
    scores = dict(MetricScore.objects.filter(metric="by_id").values_list("response_id", "value"))
    accuracy = {}
    for key, workers in (("study", CAREFUL), ("position=None", (*CAREFUL, "lefty"))):
        rows = list(
            _judgements(survey, workers).values_list(
                "response_a__system__name", "response_b__system__name", "response_a_id", "response_b_id", "winner"
            )
        )
        names = sorted({r[0] for r in rows} | {r[1] for r in rows})
        a = np.array([names.index(r[0]) for r in rows])
        b = np.array([names.index(r[1]) for r in rows])
        outcome = np.array([OUTCOME[r[4]] for r in rows])
        strengths = bradley_terry(win_counts(a, b, outcome, len(names)))
        assert settings[key]["order"] == [names[i] for i in np.argsort(-strengths, kind="stable")]
        accuracy[key], _ = tie_calibrated_accuracy([scores[r[2]] for r in rows], [scores[r[3]] for r in rows], outcome)
        row = next(r for r in section["rows"] if r["setting"] == key and r["metric"] == "by_id")
        assert row["pairwise_accuracy"] == pytest.approx(accuracy[key], abs=1e-12) and row["n_pairs"] == len(rows)
    row = next(r for r in section["rows"] if r["setting"] == "position=None" and r["metric"] == "by_id")
    assert row["delta_accuracy"] == pytest.approx(accuracy["position=None"] - accuracy["study"], abs=1e-12)


def test_the_audit_changes_no_stored_decision_or_quality_report(survey):
    report_build(dataset=survey.dataset, n_boot=0)
    decisions = list(ExclusionDecision.objects.order_by("pk").values_list("pk", "annotator_id", "excluded"))
    quality = list(QualityReport.objects.order_by("pk").values_list("pk", "fingerprint"))
    report_build(dataset=survey.dataset, n_boot=0)
    assert list(ExclusionDecision.objects.order_by("pk").values_list("pk", "annotator_id", "excluded")) == decisions
    assert list(QualityReport.objects.order_by("pk").values_list("pk", "fingerprint")) == quality


def test_a_rating_only_report_has_no_pairwise_audit(researcher):
    survey = build_collected_survey(owner=researcher)
    assert report_build(dataset=survey.dataset, n_boot=0)["pairwise_sensitivity"] is None


def test_the_audit_is_on_the_page_and_in_the_csv(survey, researcher_client, django_capture_on_commit_callbacks):
    data = report_build(dataset=survey.dataset, n_boot=0)
    header, rows = table(data, "pairwise_sensitivity")
    assert header[:5] == ["setting", "factor", "value", "n_judgements", "n_annotators"]
    assert len(rows) == len(data["pairwise_sensitivity"]["rows"])
    url = reverse("analysis:dataset_report", args=[survey.dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    section = body.split('id="t-pairwise-sensitivity"', 1)[1].split("</section>", 1)[0]
    assert "position rule off" in section and "left share 0.5 ± 0.3" in section
    study_order = " &gt; ".join(data["pairwise_sensitivity"]["settings"][0]["order"])
    assert study_order in section and ">same</td>" in section  # other rows say "same" unless it changed
    assert "?table=pairwise_sensitivity" in section
    csv = researcher_client.get(reverse("analysis:report_export", args=[_report_pk(survey), "csv"]), {
        "table": "pairwise_sensitivity"
    })  # fmt: skip
    text = b"".join(csv).decode() if csv.streaming else csv.content.decode()
    assert csv.status_code == 200 and text.splitlines()[0].startswith("setting,factor,value,n_judgements")


def _report_pk(survey):
    return Report.objects.get(dataset=survey.dataset, survey=None).pk


def test_a_study_whose_own_settings_keep_no_judgement_still_shows_what_other_filters_keep(
    survey, researcher_client, django_capture_on_commit_callbacks
):
    # every careful annotator answers in 3 s an item: a 100 s minimum excludes them all (lefty too)
    Survey.objects.filter(pk=survey.pk).update(min_seconds_per_item=100.0)
    quality_recompute(survey=survey)
    data = report_build(dataset=survey.dataset, n_boot=0)
    assert data["pairwise"] is None
    settings = by_setting(data["pairwise_sensitivity"])
    assert (settings["study"]["n_judgements"], settings["study"]["order"]) == (0, [])
    assert settings["min_seconds=None"]["n_annotators"] == 3  # the time rule off: the careful three are back
    assert settings["min_seconds=None"]["same_order"] is None  # nothing to compare with
    url = reverse("analysis:dataset_report", args=[survey.dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert "pairwise judgements were excluded" in body  # the page says why the ranking is missing
    assert 'id="t-pairwise-sensitivity"' in body and "time rule off" in body


def test_settings_that_keep_no_judgement_say_why_and_the_survey_reports_contents_list_the_section(
    survey, researcher_client, django_capture_on_commit_callbacks
):
    """Browser walk F24: rows of "0 0 – – – –" with no sentence, and no entry in "On this page"."""
    Survey.objects.filter(pk=survey.pk).update(min_seconds_per_item=100.0)
    quality_recompute(survey=survey)
    data = report_build(dataset=survey.dataset, n_boot=0)
    section = data["pairwise_sensitivity"]
    empty = [s for s in section["settings"] if not s["n_judgements"]]
    judged = PairwiseJudgement.objects.filter(survey=survey).count()
    assert section["n_judgements_judged"] == judged and section["n_annotators_judged"] == 4
    note = pairwise_sensitivity_table(data).note
    assert note.startswith(
        f"{len(empty)} settings of {len(section['settings'])} keep none of the {judged} pairwise judgements of "
        "4 annotators: the rules exclude every annotator under them"
    )
    url = reverse("analysis:survey_report", args=[survey.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert "keep none of the" in body.split('id="t-pairwise-sensitivity"', 1)[1]
    Survey.objects.filter(pk=survey.pk).update(min_seconds_per_item=1.0)  # the ranking is back
    quality_recompute(survey=survey)
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    contents = body.split('class="report-contents"', 1)[1].split("</nav>", 1)[0]
    assert '<a href="#t-pairwise">' in contents and '<a href="#t-pairwise-sensitivity">' in contents


def test_when_no_setting_keeps_a_judgement_the_note_says_so_once():
    section = {
        "settings": [{"setting": "study", "label": "the study's settings", "n_judgements": 0, "n_annotators": 0},
                     {"setting": "kappa=None", "label": "κ rule off", "n_judgements": 0, "n_annotators": 0}],
        "n_judgements_judged": 27, "n_annotators_judged": 1, "method": "",
    }  # fmt: skip
    note = pairwise_sensitivity_table({"pairwise_sensitivity": section}).note
    assert note.startswith("No setting keeps any of the 27 pairwise judgements of 1 annotator:")
