"""The pipeline bar's Quality and ADEM/judges steps open the dataset's own, not every dataset's (F29)."""

import pytest
from django.urls import reverse

from annotation import services
from scoring.models import AdemModel
from tests.annotation.studies_helpers import make_survey
from tests.test_navigation import _page, _pipeline

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_datasets(researcher):
    """walk-study with two surveys and a model; demo with a survey and a model of its own."""
    first = make_survey(researcher, name="walk-rate", dataset_name="walk-study")
    services.survey_create(dataset=first.dataset, name="walk-pairs", owner=researcher)
    other = make_survey(researcher, name="demo-simulated", dataset_name="demo")
    AdemModel.objects.create(name="walk-model", owner=researcher, dataset=first.dataset, status="ready")
    AdemModel.objects.create(name="demo-model", owner=researcher, dataset=other.dataset, status="ready")
    return first.dataset, other.dataset


def test_quality_opens_the_quality_of_this_datasets_surveys_only(researcher_client, two_datasets):
    walk, demo = two_datasets
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[walk.pk])))
    url = steps["Quality"][1]
    assert url == reverse("annotation:quality_index") + f"?dataset={walk.pk}"
    page = _page(researcher_client, url)
    assert "Quality control: surveys of walk-study" in page
    assert "walk-rate" in page and "walk-pairs" in page and "demo-simulated" not in page
    # a dataset with one survey opens that survey's own quality page
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[demo.pk])))
    assert steps["Quality"][1] == reverse("annotation:quality_survey", args=[demo.surveys.get().pk])


def test_adem_judges_opens_the_models_trained_on_this_dataset(researcher_client, two_datasets):
    walk, _ = two_datasets
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[walk.pk])))
    page = _page(researcher_client, steps["ADEM/judges"][1])
    assert "ADEM models trained on walk-study" in page
    assert "walk-model" in page and "demo-model" not in page
    assert "demo-model" in _page(researcher_client, reverse("scoring:adem_models"))  # unfiltered: every model


def test_another_researchers_dataset_in_the_filter_is_a_404(client, other_researcher, two_datasets):
    walk, _ = two_datasets
    client.force_login(other_researcher)
    assert client.get(reverse("annotation:quality_index"), {"dataset": walk.pk}).status_code == 404
    assert client.get(reverse("scoring:adem_models"), {"dataset": walk.pk}).status_code == 404
