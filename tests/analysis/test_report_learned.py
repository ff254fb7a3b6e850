"""An ADEM model trained on the report's own ratings: the report says its figures are optimistic."""

import html

import pytest
from django.urls import reverse

from analysis.services.build import report_build
from analysis.services.exports import to_latex
from annotation.models import Response
from scoring.models import AdemModel, MetricScore
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.django_db, pytest.mark.shared_data]

SPLIT = {"train": 210, "validation": 45, "test": 45}
TEST = {"pearson": 0.3174, "spearman": 0.29, "n": 45}
NOTE = (
    "adem:here was trained on these ratings (210 responses in training, 45 in validation): its figures here "
    "include responses it learnt from, so they are optimistic; its held-out test figure, the fair one, is "
    "Pearson r 0.317 (n = 45)."
)


def _adem_scores(dataset, name, values):
    """Stored scores of metric adem:<name>, as computing it on the Metrics page leaves them."""
    MetricScore.objects.bulk_create(
        MetricScore(response_id=pk, metric=f"adem:{name}", version="test", value=values[pk]["overlap_f1"])
        for pk in Response.objects.filter(context__dataset=dataset).values_list("pk", flat=True)
    )


def _model(owner, dataset, name):
    return AdemModel.objects.create(
        owner=owner, dataset=dataset, name=name, status=AdemModel.Status.READY, results={"split": SPLIT, "test": TEST}
    )


def test_the_report_flags_an_adem_model_trained_on_its_ratings_with_its_held_out_figure(
    usr_study, researcher, page_client
):
    dataset, _, _, values = usr_study
    _model(researcher, dataset, "here")
    _adem_scores(dataset, "here", values)
    url = reverse("analysis:dataset_report", args=[dataset.pk])
    page_client(url)  # queues the report (eager: computed now)
    page = html.unescape(page_client(url).content.decode())
    # under the ranking (the headline) and under the per-response correlations
    assert page.count(NOTE) == 2
    latex = to_latex(report_build(dataset=dataset, n_boot=20))
    assert latex.count(NOTE.replace("_", r"\_")) == 2


def test_adem_models_trained_elsewhere_or_not_in_the_report_are_not_flagged(usr_study, researcher):
    dataset, _, _, values = usr_study
    other = load_dataset_records(
        records=[{"context_id": "c", "context": ["hi"], "references": ["yo"], "responses": []}],
        name="elsewhere",
        owner=researcher,
    )
    _model(researcher, other, "trained-elsewhere")
    _adem_scores(dataset, "trained-elsewhere", values)
    _model(researcher, dataset, "not-computed")  # trained here, but its metric has no scores yet
    data = report_build(dataset=dataset, n_boot=0)
    assert "adem:trained-elsewhere" in data["metrics"] and data["trained_on_these_ratings"] == []
    assert "trained on these ratings" not in to_latex(data)


def _human_means(survey):
    from annotation.models import Rating

    by_response = {}
    for response_id, score in Rating.objects.filter(survey=survey, aspect="overall").values_list(
        "response_id", "score"
    ):
        by_response.setdefault(response_id, []).append(score)
    return {pk: sum(scores) / len(scores) for pk, scores in by_response.items()}


def test_planning_uses_the_best_metric_not_trained_on_these_ratings_on_the_report_and_the_survey_page(
    usr_study, researcher, researcher_client, settings, tmp_path
):
    """Browser walk F20: planning was built on adem:demo-adem, which the same report calls optimistic."""
    from scipy import stats as scipy_stats

    from analysis.report.report_keys import report_params
    from analysis.sections.planning import planning_table
    from analysis.services.build import report_get_or_create, report_refresh
    from annotation.models import Survey

    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    settings.MEDIA_ROOT = tmp_path
    dataset, survey, _, values = usr_study
    _model(researcher, dataset, "here")
    means = _human_means(survey)
    # the learned metric follows the human means exactly: the best r of the report, and a flattered one
    MetricScore.objects.bulk_create(
        MetricScore(response_id=pk, metric="adem:here", version="test", value=mean) for pk, mean in means.items()
    )
    ids = sorted(means)
    fair = {
        name: scipy_stats.pearsonr([means[pk] for pk in ids], [values[pk][name] for pk in ids]).statistic
        for name in ("length", "overlap_f1", "overlap_f1_nostop")
    }
    best_fair = max(fair, key=fair.get)
    data = report_build(dataset=dataset, survey=survey, n_boot=20)
    assert data["utterance_level"][0]["metric"] == "adem:here"  # the report's top metric...
    planning = data["planning"]
    assert planning["metric"] == best_fair  # ...is not the one planning is built on
    assert planning["r"] == pytest.approx(fair[best_fair], abs=1e-9)
    assert planning["trained_here_left_out"] == ["adem:here"] and not planning["trained_here_caveat"]
    assert "adem:here" not in {(planning.get("top_two") or {}).get("a"), (planning.get("top_two") or {}).get("b")}
    note = planning_table(data).note
    assert note.startswith(f"Planned on {best_fair}, the best metric not trained on these ratings (adem:here was")
    report = report_get_or_create(dataset=dataset, survey=survey, params=report_params())
    report_refresh(report=report)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LOCAL, status=Survey.Status.LIVE)
    body = html.unescape(researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk])).content.decode())
    panel = body.split('id="planning-title"', 1)[1].split("</section>", 1)[0]
    assert f"Planned on {best_fair}, the best metric not trained on these ratings" in panel
    assert f"For {best_fair} (r = " in panel


def test_planning_on_a_metric_trained_here_only_when_there_is_no_other_and_then_with_the_caveat():
    from analysis.sections.planning import planning_note, planning_section

    rows = [(a, r, s) for r in range(30) for a, s in (("x", 1 + r % 5), ("y", 1 + (r + r // 7) % 5))]
    utterance = [{"metric": "adem:m", "pearson": 0.6, "pearson_ci_low": 0.3, "pearson_ci_high": 0.8, "n": 30}]
    planning = planning_section(rows, utterance, [], n_available=30, trained_here=["adem:m"])
    assert planning["metric"] == "adem:m" and planning["trained_here_caveat"]
    assert planning_note(planning).startswith("Caution: adem:m was trained on these ratings")


@pytest.mark.parametrize(("fitted_on_validation", "said"), [(False, ""), (True, ", both fitted on")])
def test_a_learned_evaluator_trained_on_these_ratings_is_flagged_with_its_out_of_fold_figures(
    usr_study, researcher, fitted_on_validation, said
):
    """A stacked model chose its penalty by inner folds and fitted its validation rows too: said."""
    dataset, _, _, values = usr_study
    AdemModel.objects.create(
        owner=researcher,
        dataset=dataset,
        name="stack",
        kind=AdemModel.Kind.STACKED,
        folds=5,
        status=AdemModel.Status.READY,
        results={
            "split": {
                "folds": 5,
                "train": 216,
                "validation": 24,
                "test": 240,
                "fitted_on_validation": fitted_on_validation,
            },
            "test": TEST,
        },
    )
    MetricScore.objects.bulk_create(
        MetricScore(response_id=pk, metric="learned:stack", version="test", value=values[pk]["overlap_f1"])
        for pk in Response.objects.filter(context__dataset=dataset).values_list("pk", flat=True)
    )
    data = report_build(dataset=dataset, n_boot=0)
    assert "learned:stack" in data["metrics"]
    assert [row["metric"] for row in data["trained_on_these_ratings"]] == ["learned:stack"]
    note = (
        f"learned:stack was trained on these ratings (216 responses in training, 24 in validation{said}): its figures "
        "here include responses it learnt from, so they are optimistic; its 5-fold cross-validated out-of-fold "
        "figure, the fair one, is Pearson r 0.317, Spearman rho 0.290 (n = 45)."
    )
    assert note.replace("_", r"\_") in to_latex(data)
