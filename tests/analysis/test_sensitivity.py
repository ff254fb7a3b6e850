"""Filter-sensitivity audit: the quality rules re-decided under other settings, metrics correlated again.

The collected survey (tests/annotation/collected.py) has three careful annotators, one careless
(low kappa), one hasty (0.5 s per item) and one inattentive (fails an attention check), with the
attention policy `exclude`: each of the three rules excludes exactly one annotator.
"""

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as scipy_stats

from analysis.models import Report
from analysis.sections.sensitivity import sensitivity_table, settings_grid
from analysis.services.build import report_build
from analysis.services.exports import table, to_latex
from analysis.stats import fisher_interval
from analysis.stats import sensitivity as audit_stats
from annotation.models import Annotator, ExclusionDecision, Rating, Response
from annotation.quality import whatif
from annotation.quality.rules import AnnotatorEvidence
from annotation.quality.services import exclusion_override
from scoring.models import MetricScore
from tests.annotation.collected import CAREFUL, build_collected_survey
from tests.factories import load_rating_records

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


@pytest.fixture
def study(researcher):
    """The collected survey with two metrics: one follows the careful annotators, one is noise."""
    survey = build_collected_survey(owner=researcher)
    rng = np.random.default_rng(3)
    careful = {}
    for response_id, score in Rating.objects.filter(survey=survey, annotator__worker_id__in=CAREFUL).values_list(
        "response_id", "score"
    ):
        careful.setdefault(response_id, []).append(score)
    MetricScore.objects.bulk_create(
        [MetricScore(response_id=r, metric="tracks", version="t", value=float(np.mean(s)) + rng.normal(0, 0.3))
         for r, s in careful.items()]
        + [MetricScore(response_id=r, metric="noise", version="t", value=float(rng.normal())) for r in careful]
    )  # fmt: skip
    return survey


def by_setting(section):
    return {row["setting"]: row for row in section["settings"]}


def kept_human_means(survey, workers):
    scores = {}
    for response_id, score in Rating.objects.filter(survey=survey, annotator__worker_id__in=workers).values_list(
        "response_id", "score"
    ):
        scores.setdefault(response_id, []).append(score)
    return scores


# --- pure statistics ------------------------------------------------------------------


def test_average_ranks_equal_scipy_rankdata_with_ties():
    values = np.array([3.0, 1.0, 2.0, 3.0, 3.0, 0.5, 2.0])
    assert audit_stats.average_ranks(values) == pytest.approx(scipy_stats.rankdata(values))


def test_correlations_equal_scipy_on_the_items_both_define():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 6, 50).astype(float)
    metric = human + rng.normal(0, 1, 50)
    human[[3, 7]] = np.nan
    metric[[10]] = np.nan
    r, rho, n = audit_stats.correlations(human, {"m": metric})["m"]
    keep = np.isfinite(human) & np.isfinite(metric)
    assert n == 47
    assert r == pytest.approx(scipy_stats.pearsonr(human[keep], metric[keep]).statistic, abs=1e-12)
    assert rho == pytest.approx(scipy_stats.spearmanr(human[keep], metric[keep]).statistic, abs=1e-12)


def test_fisher_intervals_equal_the_reports_fisher_interval():
    low, high = audit_stats.fisher_intervals(np.array([0.42, -0.1, np.nan]), np.array([60, 10, 60]))
    assert (low[0], high[0]) == pytest.approx(fisher_interval(0.42, 60))
    assert (low[1], high[1]) == pytest.approx(fisher_interval(-0.1, 10))
    assert np.isnan(low[2]) and np.isnan(high[2])
    spearman = audit_stats.fisher_intervals(np.array([0.3]), np.array([40]), spearman=True)
    assert (spearman[0][0], spearman[1][0]) == pytest.approx(fisher_interval(0.3, 40, spearman=True))


def test_audit_counts_what_each_mask_keeps_and_compares_with_the_first():
    response_index = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    scores = np.array([1.0, 2.0, 2.0, 3.0, 4.0, 4.0, 5.0, 1.0])
    annotators = np.array([7, 8, 7, 8, 7, 8, 7, 8])
    metrics = {"m": np.array([1.0, 2.0, 3.0, 4.0])}
    masks = {"all": np.ones(8, bool), "only 7": annotators == 7}
    result = audit_stats.audit(response_index, scores, annotators, masks, metrics)
    assert (result["all"]["n_ratings"], result["all"]["n_annotators"], result["all"]["n_responses"]) == (8, 2, 4)
    assert (result["only 7"]["n_ratings"], result["only 7"]["n_annotators"]) == (4, 1)
    only_seven = scipy_stats.pearsonr([1, 2, 4, 5], [1, 2, 3, 4]).statistic
    everyone = scipy_stats.pearsonr([1.5, 2.5, 4, 3], [1, 2, 3, 4]).statistic
    assert result["only 7"]["rows"][0]["pearson"] == pytest.approx(only_seven)
    assert result["only 7"]["rows"][0]["delta_pearson"] == pytest.approx(only_seven - everyone)
    assert result["all"]["max_shift"] == 0


def test_a_setting_that_keeps_no_rating_neither_keeps_nor_changes_the_order():
    # A strict kappa threshold can exclude everyone: there is then no order to compare.
    response_index, scores, annotators = np.array([0, 1, 2]), np.array([1.0, 3.0, 5.0]), np.array([7, 7, 7])
    metrics = {"m": np.array([1.0, 2.0, 3.0]), "n": np.array([3.0, 1.0, 2.0])}
    masks = {"study": np.ones(3, bool), "nobody": np.zeros(3, bool)}
    result = audit_stats.audit(response_index, scores, annotators, masks, metrics)
    assert result["study"]["same_ranking"] is True
    assert (result["nobody"]["n_ratings"], result["nobody"]["same_ranking"]) == (0, None)
    data = {"sensitivity": {"settings": [{"label": "nobody", "n_annotators": 0, "n_ratings": 0, "same_ranking": None}]}}
    assert "changed" not in sensitivity_table(data).rows[0] and "changed" not in to_latex(data)


# --- the report section ------------------------------------------------------------


def test_each_rule_varied_keeps_the_annotator_it_excluded(study):
    section = report_build(dataset=study.dataset, n_boot=0)["sensitivity"]
    settings = by_setting(section)
    assert settings["study"]["n_annotators"] == 3  # careless, hasty and inattentive are out
    assert settings["kappa=off"]["n_annotators"] == 4  # the careless one is back
    assert settings["attention=flag"]["n_annotators"] == 4  # the inattentive one is back
    assert settings["attention=exclude"]["n_annotators"] == 3
    assert settings["min_seconds=off"]["n_annotators"] == 4  # the hasty one is back
    assert settings["min_seconds=1"]["n_annotators"] == 3  # 0.5 s per item is still below 1 s
    assert [s["setting"] for s in section["settings"]] == [key for key, *_ in settings_grid()]
    assert len(section["rows"]) == len(settings_grid()) * 2
    assert section["study_settings"][0]["attention_policy"] == "exclude"


def test_the_study_row_keeps_exactly_the_ratings_the_report_uses(study):
    data = report_build(dataset=study.dataset, n_boot=0)
    study_row = by_setting(data["sensitivity"])["study"]
    assert study_row["n_ratings"] == data["n_ratings"]
    utterance = {row["metric"]: row for row in data["utterance_level"]}
    for row in data["sensitivity"]["rows"]:
        if row["setting"] == "study":
            assert row["pearson"] == pytest.approx(utterance[row["metric"]]["pearson"], abs=1e-12)
            assert row["spearman"] == pytest.approx(utterance[row["metric"]]["spearman"], abs=1e-12)


def test_a_settings_correlations_equal_scipy_on_the_kept_annotators_means(study):
    section = report_build(dataset=study.dataset, n_boot=0)["sensitivity"]
    scores = kept_human_means(study, (*CAREFUL, "careless"))  # kappa rule off: careless kept
    metric = dict(MetricScore.objects.filter(metric="tracks").values_list("response_id", "value"))
    order = sorted(scores)
    human = [np.mean(scores[r]) for r in order]
    values = [metric[r] for r in order]
    row = next(r for r in section["rows"] if r["setting"] == "kappa=off" and r["metric"] == "tracks")
    assert row["pearson"] == pytest.approx(scipy_stats.pearsonr(human, values).statistic, abs=1e-12)
    assert row["spearman"] == pytest.approx(scipy_stats.spearmanr(human, values).statistic, abs=1e-12)
    assert (row["pearson_ci_low"], row["pearson_ci_high"]) == pytest.approx(fisher_interval(row["pearson"], row["n"]))
    assert row["n_ratings"] == sum(len(v) for v in scores.values())


def test_the_audit_changes_no_stored_decision(study):
    report_build(dataset=study.dataset, n_boot=0)  # brings the decisions up to date first
    before = list(ExclusionDecision.objects.order_by("pk").values_list("pk", "annotator_id", "excluded"))
    report_build(dataset=study.dataset, n_boot=0)
    assert list(ExclusionDecision.objects.order_by("pk").values_list("pk", "annotator_id", "excluded")) == before


def test_a_researchers_override_holds_at_every_setting(study, researcher):
    without = by_setting(report_build(dataset=study.dataset, n_boot=0)["sensitivity"])
    careless = Annotator.objects.get(worker_id="careless")
    exclusion_override(survey=study, annotator=careless, excluded=False, note="checked by hand", user=researcher)
    overridden = by_setting(report_build(dataset=study.dataset, n_boot=0)["sensitivity"])
    assert overridden["study"]["n_annotators"] == 4
    for key in ("kappa=0", "kappa=0.2", "kappa=0.5", "attention=flag", "min_seconds=off"):
        # the careless annotator is kept wherever the kappa rule would have dropped them
        assert overridden[key]["n_annotators"] == without[key]["n_annotators"] + 1, key
    assert overridden["kappa=off"]["n_annotators"] == without["kappa=off"]["n_annotators"]


def test_sensitivity_is_in_the_csv_and_latex_and_on_the_page(
    study, researcher_client, django_capture_on_commit_callbacks
):
    data = report_build(dataset=study.dataset, n_boot=0)
    header, rows = table(data, "sensitivity")
    assert header[:3] == ["setting", "factor", "value"] and len(rows) == len(data["sensitivity"]["rows"])
    assert r"\label{tab:filter-sensitivity}" in to_latex(data)
    url = reverse("analysis:dataset_report", args=[study.dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert 'id="t-sensitivity"' in body and "κ threshold 0.3" in body
    assert "Each metric under every setting (" in body  # the long table sits behind a <details> toggle
    plot = reverse("analysis:report_plot", args=[_report_pk(study), "sensitivity", "png"])
    assert plot in body
    response = researcher_client.get(plot)
    assert response.status_code == 200 and response.content[:8] == b"\x89PNG\r\n\x1a\n"


def _report_pk(survey):
    return Report.objects.get(dataset=survey.dataset, survey=None).pk


def test_an_excluded_annotator_without_kept_ratings_never_drops_another_surveys_annotator(study, monkeypatch):
    # A second survey of the dataset, rated by one worker; in the first survey an annotator the rules
    # exclude whose ratings are not in the audit (e.g. only rejected work), with an id beyond every
    # kept rater's: (survey, annotator) keys must not collide.
    responses = Response.objects.filter(context__dataset=study.dataset).select_related("context", "system")[:12]
    records = [
        {"context_id": r.context.external_id, "system": r.system.name, "worker": "second-1", "score": 1 + i % 5}
        for i, r in enumerate(responses)
    ]
    second = load_rating_records(records=records, dataset=study.dataset, survey_name="second", owner=study.owner)
    before = by_setting(report_build(dataset=study.dataset, n_boot=0)["sensitivity"])
    rater = Annotator.objects.get(worker_id="second-1").pk
    width = Annotator.objects.order_by("-pk").first().pk + 1
    phantom = Annotator.objects.create(pk=(second.pk - study.pk) * width + rater, provider="local", worker_id="gone")
    stored_evidence = whatif.stored_evidence

    def with_phantom(content):
        stored = stored_evidence(content)
        if content.get("survey") == study.pk:
            stored.evidence[phantom.pk] = AnnotatorEvidence(worker="gone", attention_total=1, attention_failed=1)
        return stored

    monkeypatch.setattr(whatif, "stored_evidence", with_phantom)
    after = by_setting(report_build(dataset=study.dataset, n_boot=0)["sensitivity"])
    assert after["study"]["n_ratings"] == before["study"]["n_ratings"]
    assert after["study"]["n_annotators"] == before["study"]["n_annotators"]
