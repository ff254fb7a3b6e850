"""An ADEM model trained on the report's own ratings: the report says its figures are optimistic."""

import html

import pytest
from django.urls import reverse

from analysis.exporting import to_latex
from analysis.services import report_build
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
