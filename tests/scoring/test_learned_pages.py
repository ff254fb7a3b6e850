"""The learned-evaluator training page, its run's progress and curve, the model page and the
scoring API: owners only, as for ADEM (issue 41)."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from scoring.models import AdemModel, MetricScore, TrainingRun
from scoring.services.tokens import api_token_create

pytestmark = pytest.mark.shared_data


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path


@pytest.fixture
def with_metric(usr):
    """One stored metric beside the lengths, for the stacked kind to read."""
    responses = list(usr.contexts.values_list("responses__pk", "responses__text"))
    MetricScore.objects.bulk_create(
        [MetricScore(response_id=pk, metric="response_len", version="t", value=len(text)) for pk, text in responses]
    )
    return usr


def _train(client, dataset, name="stack", **extra):
    data = {"name": name, "dataset": dataset.pk, "kind": "stacked", "folds": 3, "seed": 0, **extra}
    return client.post(reverse("scoring:learned_train"), data)


def test_the_page_asks_for_a_login(client):
    response = client.get(reverse("scoring:learned_train"))
    assert response.status_code == 302 and "login" in response.url


def test_training_from_the_page_shows_progress_by_fold_and_the_curve(
    researcher_client, with_metric, django_capture_on_commit_callbacks
):
    page = researcher_client.get(reverse("scoring:learned_train"))
    assert page.status_code == 200 and "learned:NAME" in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = _train(researcher_client, with_metric)
    run = TrainingRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("scoring:adem_run", args=[run.pk])
    progress = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert progress["status"] == "done" and progress["result"]["kind"] == "stacked"
    folds = {p["fold"] for p in progress["progress"] if p["stage"] == "fold"}
    assert folds == {0, 1, 2} and all("val_pearson" in p for p in progress["progress"])
    curve = researcher_client.get(reverse("scoring:adem_run_curve", args=[run.pk]))
    assert curve["Content-Type"] == "image/svg+xml" and b"the folds, then the final fit" in curve.content
    run_page = researcher_client.get(reverse("scoring:adem_run", args=[run.pk])).content.decode()
    assert "Train a learned evaluator" in run_page and "Final fit, epoch" in run_page
    model = AdemModel.objects.get(name="stack")
    detail = researcher_client.get(reverse("scoring:adem_model", args=[model.pk])).content.decode()
    assert "Learned evaluator stack" in detail and "learned:stack" in detail and "pooled out of fold" in detail
    assert "response_len" in detail  # its weights
    # its curve's validation correlation is the inner folds' (the stacked kind's default rule), said under it
    assert "pooled over 5 folds by context inside the training and validation rows" in detail


def test_the_vectors_precision_is_chosen_on_the_page_for_the_stacked_kind_only(researcher_client, with_metric):
    response = _train(researcher_client, with_metric, kind="cross-encoder", feature_precision="int8")
    assert response.status_code == 200 and "offered for the stacked kind only" in response.content.decode()
    assert not TrainingRun.objects.exists()
    response = _train(researcher_client, with_metric, feature_precision="int8")
    run = TrainingRun.objects.get()
    assert response.status_code == 302 and run.params["config"] == {"feature_precision": "int8"}
    response = _train(researcher_client, with_metric, name="plain")
    assert TrainingRun.objects.get(params__name="plain").params["config"] == {"feature_precision": "auto"}
    _train(researcher_client, with_metric, name="exact", feature_precision="float32")
    assert TrainingRun.objects.get(params__name="exact").params["config"] == {"feature_precision": "float32"}


def test_a_name_already_used_by_an_adem_model_is_refused_on_the_page(researcher_client, with_metric, researcher):
    AdemModel.objects.create(name="taken", owner=researcher, dataset=with_metric)
    response = _train(researcher_client, with_metric, name="taken")
    assert response.status_code == 200 and "already have a model with this name" in response.content.decode()
    assert not TrainingRun.objects.exists()


def test_another_researcher_sees_neither_the_run_nor_the_model_nor_can_score(
    client, with_metric, researcher, other_researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        _train(client, with_metric)
    run, model = TrainingRun.objects.get(), AdemModel.objects.get(name="stack")
    client.force_login(other_researcher)
    for url in (
        reverse("scoring:adem_run", args=[run.pk]),
        reverse("scoring:adem_run_progress", args=[run.pk]),
        reverse("scoring:adem_run_curve", args=[run.pk]),
        reverse("scoring:adem_model", args=[model.pk]),
    ):
        assert client.get(url).status_code == 404, url
    # bob's dataset list does not hold alice's: he cannot train on her ratings either
    assert "dataset" in _train(client, with_metric, name="mine").context["form"].errors
    key = api_token_create(user=other_researcher)
    refused = Client().post(
        reverse("scoring:adem_model_score", args=[model.pk]),
        data=json.dumps({"triples": []}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert refused.status_code == 404


def test_the_scoring_api_scores_with_a_learned_evaluator(
    client, with_metric, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        _train(client, with_metric)
    key = api_token_create(user=researcher)
    triple = {"context": ["hi there"], "reference": "", "response": "hello, how are you?"}
    response = Client().post(
        reverse("scoring:adem_score", args=["stack"]),
        data=json.dumps({"triples": [triple, {**triple, "features": {"response_len": 900}}]}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    body = response.json()
    assert response.status_code == 200 and body["metric"] == "learned:stack"
    assert len(body["scores"]) == 2 and body["scores"][0] != body["scores"][1]
