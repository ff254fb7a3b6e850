"""Deleting an ADEM model from its page: owner only, confirmed by a POST, refused while a job of it runs,
rows gone atomically and the checkpoint file only after the commit; the pages that named it still render."""

import html
from pathlib import Path

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from annotation.models import Response
from scoring.models import AdemModel, MetricRun, MetricScore, TrainingRun
from scoring.services.adem.delete import AdemModelBusy, adem_model_delete
from scoring.services.adem.training import adem_root, adem_train
from scoring.services.metrics.compute import metrics_compute
from tests.factories import load_dataset_records

FAST = {"max_epochs": 3, "patience": 3}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


def _dataset(owner, name):
    records = [
        {"context_id": f"c{i}", "context": ["hi there"], "references": ["hello"], "responses": [
            {"system": "s1", "text": f"hello {i}"}, {"system": "s2", "text": f"hey {i}"}]}
        for i in range(3)
    ]  # fmt: skip
    return load_dataset_records(records=records, name=name, owner=owner)


def _model(owner, dataset, name="bad", status=AdemModel.Status.READY):
    """A registered model with a checkpoint file where training writes one, and its stored scores."""
    model = AdemModel.objects.create(owner=owner, dataset=dataset, name=name, status=status)
    path = adem_root() / "models" / f"{model.pk}-{name}.ckpt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"checkpoint")
    model.checkpoint_path, model.checkpoint_sha256 = str(path), "ab" * 32
    model.save()
    MetricScore.objects.bulk_create(
        MetricScore(response=response, metric=model.metric_name, version="ababab", value=0.5)
        for response in Response.objects.filter(context__dataset=dataset)
    )
    return model


def _url(model):
    return reverse("scoring:adem_model_delete", args=[model.pk])


@pytest.fixture
def bad(researcher):
    return _model(researcher, _dataset(researcher, "mine"))


def test_the_owner_deletes_a_model_its_checkpoint_and_its_scores_and_lands_on_the_adem_index(
    researcher_client, bad, django_capture_on_commit_callbacks
):
    dataset = bad.dataset
    MetricScore.objects.bulk_create(  # another metric's scores stay
        MetricScore(response=r, metric="bleu4", version="1", value=0.1)
        for r in Response.objects.filter(context__dataset=dataset)
    )
    TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN, owner=bad.owner, adem_model=bad, status="done")
    checkpoint = Path(bad.checkpoint_path)
    confirm = researcher_client.get(_url(bad)).content.decode()
    assert "This cannot be undone" in confirm and checkpoint.name in confirm and "6 stored" in confirm
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(_url(bad), follow=True)
    assert response.redirect_chain == [(reverse("scoring:adem_models"), 302)]
    page = html.unescape(response.content.decode())
    assert "ADEM model bad deleted, with its checkpoint file and its 6 adem:bad scores." in page
    assert not AdemModel.objects.filter(pk=bad.pk).exists() and not TrainingRun.objects.exists()
    assert not MetricScore.objects.filter(metric="adem:bad").exists()
    assert MetricScore.objects.filter(metric="bleu4").count() == 6
    assert not checkpoint.exists()


def test_another_researchers_same_named_scores_are_kept(researcher_client, bad, other_researcher):
    theirs = _model(other_researcher, _dataset(other_researcher, "theirs"), name="bad")
    researcher_client.post(_url(bad))
    assert MetricScore.objects.filter(metric="adem:bad").count() == 6
    assert set(MetricScore.objects.values_list("response__context__dataset", flat=True)) == {theirs.dataset_id}
    assert Path(theirs.checkpoint_path).exists()


def test_another_researcher_and_staff_get_a_404_and_nothing_is_deleted(bad, other_researcher, admin_user):
    for user in (other_researcher, admin_user):
        client = Client()
        client.force_login(user)
        assert client.get(_url(bad)).status_code == 404
        assert client.post(_url(bad)).status_code == 404
    assert AdemModel.objects.filter(pk=bad.pk).exists() and Path(bad.checkpoint_path).exists()
    assert MetricScore.objects.filter(metric="adem:bad").count() == 6


def test_a_get_only_asks_and_the_model_page_links_to_the_question_for_its_owner_only(
    researcher_client, bad, admin_user
):
    detail = reverse("scoring:adem_model", args=[bad.pk])
    assert _url(bad) in researcher_client.get(detail).content.decode()
    researcher_client.get(_url(bad))
    assert AdemModel.objects.filter(pk=bad.pk).exists() and Path(bad.checkpoint_path).exists()
    assert MetricScore.objects.filter(metric="adem:bad").count() == 6
    staff = Client()
    staff.force_login(admin_user)
    page = staff.get(detail)
    assert page.status_code == 200 and _url(bad) not in page.content.decode()


def test_a_post_without_the_csrf_token_is_refused(researcher, bad):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    assert client.post(_url(bad)).status_code == 403
    assert AdemModel.objects.filter(pk=bad.pk).exists()


def test_a_model_still_training_is_not_deleted_and_the_page_says_why(researcher_client, researcher):
    model = _model(researcher, _dataset(researcher, "mine"), status=AdemModel.Status.RUNNING)
    run = TrainingRun.objects.create(kind="train", owner=researcher, adem_model=model, status="running")
    confirm = researcher_client.get(_url(model)).content.decode()
    assert f"still being trained (run {run.pk})" in confirm and "confirm-delete" not in confirm
    response = researcher_client.post(_url(model))
    assert response.status_code == 409
    assert f"ADEM model bad is still being trained (run {run.pk})" in response.content.decode()
    assert AdemModel.objects.filter(pk=model.pk).exists() and Path(model.checkpoint_path).exists()
    assert MetricScore.objects.filter(metric="adem:bad").count() == 6


def test_a_model_whose_metric_a_queued_run_is_computing_is_not_deleted(researcher_client, bad):
    run = MetricRun.objects.create(dataset=bad.dataset, metrics=["bleu4", "adem:bad"], status="queued")
    response = researcher_client.post(_url(bad))
    assert response.status_code == 409
    assert f"scoring dataset mine (metrics run {run.pk}, queued)" in response.content.decode()
    assert AdemModel.objects.filter(pk=bad.pk).exists() and MetricScore.objects.count() == 6
    run.status = MetricRun.Status.DONE
    run.save()
    MetricRun.objects.create(dataset=bad.dataset, metrics=["bleu4", "adem:bad2"], status="running")  # not this one
    assert researcher_client.post(_url(bad)).status_code == 302
    assert not AdemModel.objects.filter(pk=bad.pk).exists()


def test_a_rolled_back_delete_keeps_the_rows_and_the_checkpoint(bad, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        adem_model_delete(model=bad)
        raise RuntimeError("the caller's transaction fails after the delete")
    assert AdemModel.objects.filter(pk=bad.pk).exists() and Path(bad.checkpoint_path).exists()
    assert MetricScore.objects.filter(metric="adem:bad").count() == 6


def test_the_checkpoint_stays_until_the_transaction_commits(bad, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        adem_model_delete(model=bad)
    assert not AdemModel.objects.filter(pk=bad.pk).exists() and Path(bad.checkpoint_path).exists()
    for callback in callbacks:
        callback()
    assert not Path(bad.checkpoint_path).exists()


def test_the_service_refuses_a_busy_model_and_never_unlinks_a_file_outside_the_models_folder(
    researcher, tmp_path, django_capture_on_commit_callbacks
):
    model = _model(researcher, _dataset(researcher, "mine"), status=AdemModel.Status.QUEUED)
    with pytest.raises(AdemModelBusy, match="still being trained"):
        adem_model_delete(model=model)
    elsewhere = tmp_path / "precious.ckpt"
    elsewhere.write_bytes(b"not ours")
    AdemModel.objects.filter(pk=model.pk).update(status="ready", checkpoint_path=str(elsewhere))
    with django_capture_on_commit_callbacks(execute=True):
        adem_model_delete(model=model)
    assert not AdemModel.objects.exists() and elsewhere.exists()


@pytest.mark.shared_data
def test_the_pages_that_named_a_deleted_model_still_render(
    researcher_client, usr, researcher, django_capture_on_commit_callbacks, settings
):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    model = adem_train(dataset=usr, name="gone", encoder="glove", owner=researcher, config=FAST)
    with django_capture_on_commit_callbacks(execute=True):
        run = metrics_compute(dataset=usr, metrics=["bleu4", "adem:gone"])  # the eager task scores it
    run.refresh_from_db()
    assert run.status == MetricRun.Status.DONE
    metrics_page = reverse("scoring:dataset_metrics", args=[usr.pk])
    report_page = reverse("analysis:dataset_report", args=[usr.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(report_page)  # computes the report (eager) with adem:gone in it
    assert "adem:gone" in researcher_client.get(report_page).content.decode()
    assert "adem:gone" in researcher_client.get(metrics_page).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        deleted = researcher_client.post(_url(model), follow=True)  # the message shows on the index
    assert "ADEM model gone deleted" in deleted.content.decode()
    assert not Path(model.checkpoint_path).exists()
    pages = [reverse("scoring:adem_models"), metrics_page, reverse("analysis:reports_index")]
    for url in [*pages, reverse("annotation:dataset_list"), reverse("annotation:dataset_detail", args=[usr.pk])]:
        page = researcher_client.get(url)
        assert page.status_code == 200, url
        assert "adem:gone" not in page.content.decode(), url
    with django_capture_on_commit_callbacks(execute=True):
        assert researcher_client.get(report_page).status_code == 200  # stale: recomputed without it
    page = researcher_client.get(report_page)
    assert page.status_code == 200 and "adem:gone" not in page.content.decode() and "bleu4" in page.content.decode()


def test_the_admin_deletes_a_model_through_the_service_with_its_scores_and_checkpoint(
    client, admin_user, bad, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    checkpoint = Path(bad.checkpoint_path)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:scoring_ademmodel_delete", args=[bad.pk]), {"post": "yes"})
    assert response.status_code == 302 and not AdemModel.objects.filter(pk=bad.pk).exists()
    assert not MetricScore.objects.filter(metric="adem:bad").exists() and not checkpoint.exists()


def test_the_admin_refuses_a_model_still_training_saying_why(client, admin_user, researcher):
    model = _model(researcher, _dataset(researcher, "mine"), status=AdemModel.Status.RUNNING)
    client.force_login(admin_user)
    page = client.post(reverse("admin:scoring_ademmodel_delete", args=[model.pk]), {"post": "yes"}, follow=True)
    text = html.unescape(page.content.decode())
    assert "ADEM model bad is still being trained" in text and "deleted successfully" not in text
    assert AdemModel.objects.filter(pk=model.pk).exists() and MetricScore.objects.count() == 6


def test_the_admin_bulk_delete_counts_only_the_models_it_deleted_and_names_the_one_training(
    client, admin_user, researcher, django_capture_on_commit_callbacks
):
    training = _model(researcher, _dataset(researcher, "a"), name="training", status=AdemModel.Status.RUNNING)
    ready = _model(researcher, _dataset(researcher, "b"), name="ready")
    client.force_login(admin_user)
    chosen = {"action": "delete_selected", "_selected_action": [training.pk, ready.pk], "post": "yes"}
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(reverse("admin:scoring_ademmodel_changelist"), chosen, follow=True)
    text = html.unescape(page.content.decode())
    assert "Successfully deleted 1 ADEM model." in text and "Successfully deleted 2" not in text
    assert "Not deleted: ADEM model training is still being trained" in text
    assert list(AdemModel.objects.values_list("name", flat=True)) == ["training"]
    assert Path(training.checkpoint_path).exists() and not Path(ready.checkpoint_path).exists()
    assert set(MetricScore.objects.values_list("metric", flat=True)) == {"adem:training"}
