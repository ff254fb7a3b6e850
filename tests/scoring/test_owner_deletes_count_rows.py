"""Deleting a judge or an evaluator (ADEM or a learned one) from its page: every table's rows counted
before and after (all models of every app), so the delete removes what its confirmation page names
and nothing else, the evaluator's checkpoint file going once the transaction has committed."""


import pytest
from django.apps import apps
from django.urls import reverse

from annotation.models import Response
from scoring.models import AdemModel, Judge, JudgeCacheEntry, JudgeUsage, MetricRun, MetricScore, TrainingRun
from scoring.services.adem.training import adem_root
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


def row_counts():
    return {model._meta.label: model.objects.count() for model in apps.get_models(include_auto_created=True)}


def changed(before, after):
    return {label: after[label] - before[label] for label in before if before[label] != after[label]}


def _dataset(owner, name):
    records = [
        {"context_id": f"c{i}", "context": ["hi"], "references": ["hello"],
         "responses": [{"system": "s1", "text": f"a {i}"}, {"system": "s2", "text": f"b {i}"}]}
        for i in range(4)
    ]  # fmt: skip
    return load_dataset_records(records=records, name=name, owner=owner)


def _scores(dataset, metric):
    MetricScore.objects.bulk_create(
        MetricScore(response=r, metric=metric, version="1", value=0.5)
        for r in Response.objects.filter(context__dataset=dataset)
    )


def _evaluator(owner, dataset, name, kind):
    model = AdemModel.objects.create(owner=owner, dataset=dataset, name=name, kind=kind, status="ready")
    path = adem_root() / "models" / f"{model.pk}-{name}.ckpt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"weights")
    AdemModel.objects.filter(pk=model.pk).update(checkpoint_path=str(path), checkpoint_sha256="ab" * 32)
    TrainingRun.objects.create(kind=TrainingRun.Kind.TRAIN_LEARNED, owner=owner, adem_model=model, status="done")
    _scores(dataset, model.metric_name)
    model.refresh_from_db()
    return model, path


@pytest.mark.parametrize("kind", [AdemModel.Kind.ADEM, AdemModel.Kind.CROSS_ENCODER])
def test_deleting_an_evaluator_removes_its_row_runs_scores_and_file_and_nothing_else(
    researcher_client, researcher, other_researcher, kind, django_capture_on_commit_callbacks
):
    mine, theirs = _dataset(researcher, "mine"), _dataset(other_researcher, "theirs")
    model, path = _evaluator(researcher, mine, "ev", kind)
    _twin, twin_path = _evaluator(other_researcher, theirs, "ev", kind)  # same name, another owner
    _scores(mine, "bleu1")
    page = researcher_client.get(reverse("scoring:adem_model", args=[model.pk])).content.decode()
    url = reverse("scoring:adem_model_delete", args=[model.pk])
    assert url in page  # reachable from the evaluator's page
    assert "8 stored" in researcher_client.get(url).content.decode()
    before = row_counts()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        researcher_client.post(url)
    assert path.exists()  # not before the commit
    for callback in callbacks:
        callback()
    assert changed(before, row_counts()) == {
        "scoring.AdemModel": -1,
        "scoring.TrainingRun": -1,
        "scoring.MetricScore": -8,
    }
    assert not path.exists() and twin_path.exists()


def test_removing_a_judge_removes_its_cache_usage_and_scores_and_nothing_else(
    researcher_client, researcher, other_researcher
):
    mine, theirs = _dataset(researcher, "mine"), _dataset(other_researcher, "theirs")
    judges = []
    for owner, dataset in ((researcher, mine), (other_researcher, theirs)):
        judge = Judge.objects.create(owner=owner, name="j", base_url="http://127.0.0.1:9/v1", model="m")
        for n in range(3):
            JudgeCacheEntry.objects.create(judge=judge, template_version="v1", prompt_hash=f"{n}" * 64, values=[3])
        run = MetricRun.objects.create(dataset=dataset, metrics=[judge.metric_name], status="done")
        JudgeUsage.objects.create(judge=judge, run=run, requests=3, prompt_tokens=30, completion_tokens=3)
        _scores(dataset, judge.metric_name)
        judges.append(judge)
    url = reverse("scoring:judge_remove", args=[judges[0].pk])
    assert url in researcher_client.get(reverse("scoring:judge_detail", args=[judges[0].pk])).content.decode()
    before = row_counts()
    assert researcher_client.post(url).status_code == 302
    assert changed(before, row_counts()) == {
        "scoring.Judge": -1,
        "scoring.JudgeCacheEntry": -3,
        "scoring.JudgeUsage": -1,
        "scoring.MetricScore": -8,
    }
    assert Judge.objects.filter(pk=judges[1].pk).exists()
