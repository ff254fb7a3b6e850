"""Learned evaluators through the database: training from the ratings, the registry, features that
cannot leak, the scoring API's function, the metric `learned:<name>`, the command (issue 41)."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Response
from annotation.selectors import human_scores
from scoring.models import AdemModel, MetricScore, TrainingRun
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.scoring import adem_metric_names, adem_score
from scoring.services.learned.jobs import learned_train_queue
from scoring.services.learned.training import learned_rated, learned_train
from scoring.services.metrics.chunks import metric_chunk_compute
from scoring.services.metrics.compute import metric_names, metrics_compute

pytestmark = pytest.mark.shared_data

# The cross-encoder on its first transformer layer, short inputs, one epoch: seconds, not minutes.
TINY_CROSS_ENCODER = {
    "layers": 1,
    "max_length": 32,
    "response_tokens": 10,
    "reference_tokens": 6,
    "max_epochs": 1,
    "patience": 1,
    "batch_size": 16,
}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


def _store(metric, values):
    MetricScore.objects.bulk_create(
        [MetricScore(response_id=pk, metric=metric, version="t", value=value) for pk, value in values.items()]
    )


@pytest.fixture
def scored_usr(usr):
    """The USR study with two stored scores per rated response: `adem:oracle`, which IS the human
    score (a model trained in-fold on these ratings at its most leaky), and `noisy`, a metric that
    follows the human score loosely."""
    scores = {pk: mean for pk, (mean, _) in human_scores(dataset=usr).items()}
    _store("adem:oracle", scores)
    _store("learned:oracle", scores)
    _store("noisy", {pk: value + ((pk * 7919) % 13 - 6) / 6 for pk, value in scores.items()})
    return usr


def test_stacked_features_are_stored_metrics_and_lengths_never_learned_scores(scored_usr):
    rated = learned_rated(dataset=scored_usr)
    names = set().union(*(r.features for r in rated))
    assert names == {"noisy", "length:response_words", "length:context_words"}


def test_a_stacked_evaluator_is_registered_as_learned_metric_with_out_of_fold_figures(scored_usr, researcher):
    model = learned_train(dataset=scored_usr, name="stack", kind="stacked", folds=3, seed=2)
    model.refresh_from_db()
    assert model.status == AdemModel.Status.READY and model.owner == researcher
    assert model.kind == "stacked" and model.metric_name == "learned:stack"
    test = model.results["test"]
    assert test["n"] == 240 == model.training_data["responses"]
    # the oracle would give rho ~1: the figure is the noisy metric's and the lengths' worth only
    assert 0.4 < test["spearman"] < 0.95
    assert set(model.results["weights"]) >= {"noisy", "length:response_words"}
    assert len(model.results["curves"]) == 3 and model.results["split"]["folds"] == 3
    assert "learned:stack" in adem_metric_names(owner=researcher)
    assert metric_names(["learned:stack"], owner=researcher) == ["learned:stack"]


def test_the_learned_metric_writes_one_versioned_score_per_response(scored_usr):
    model = learned_train(dataset=scored_usr, name="stack", kind="stacked", folds=3)
    run = metrics_compute(dataset=scored_usr, metrics=["learned:stack"], dispatch=False)
    for chunk in run.chunks.all():
        metric_chunk_compute(chunk=chunk)
    rows = MetricScore.objects.filter(metric="learned:stack")
    assert rows.count() == Response.objects.filter(context__dataset=scored_usr).count()
    assert {r.version for r in rows} == {model.checkpoint_sha256[:12]}
    assert all(r.value is not None for r in rows)
    # the stored score is the model's prediction for that response (same features, same weights)
    one = rows.order_by("response_id").first()
    again = adem_score(
        model=model,
        triples=[
            {
                "context": [t.get("text", "") for t in one.response.context.turns],
                "reference": "",
                "response": one.response.text,
                "features": {"noisy": MetricScore.objects.get(response=one.response, metric="noisy").value},
            }
        ],
    )
    assert again[0] == pytest.approx(one.value)


def test_the_scoring_api_function_refuses_bad_features_and_an_empty_response(scored_usr):
    model = learned_train(dataset=scored_usr, name="stack", kind="stacked", folds=3)
    with pytest.raises(AdemRefusal, match="features must map"):
        adem_score(model=model, triples=[{"context": ["hi"], "reference": "", "response": "x", "features": [1]}])
    with pytest.raises(AdemRefusal, match="the response is empty"):
        adem_score(model=model, triples=[{"context": ["hi"], "reference": "", "response": " "}])
    # no reference and no features: lengths alone, the rest filled in as in training
    assert len(adem_score(model=model, triples=[(["hi there"], "", "hello to you")])) == 1


def test_names_are_shared_with_adem_models_and_kinds_are_checked(scored_usr):
    learned_train(dataset=scored_usr, name="taken", kind="stacked", folds=3)
    with pytest.raises(AdemRefusal, match="already have a model named 'taken'"):
        learned_train(dataset=scored_usr, name="taken", kind="stacked", folds=3)
    with pytest.raises(AdemRefusal, match="unknown evaluator kind"):
        learned_train(dataset=scored_usr, name="other", kind="adem", folds=3)
    with pytest.raises(AdemRefusal, match="--folds must be between"):
        learned_train(dataset=scored_usr, name="other", kind="stacked", folds=1000)
    assert not AdemModel.objects.filter(name="other").exists()


def test_a_queued_training_runs_once_and_a_retry_of_a_done_run_changes_nothing(
    scored_usr, researcher, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = learned_train_queue(dataset=scored_usr, name="queued", owner=researcher, kind="stacked", folds=3)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.DONE and run.kind == TrainingRun.Kind.TRAIN_LEARNED
    assert run.result["kind"] == "stacked" and run.result["test"]["n"] == 240
    points = run.progress
    assert points and {p["stage"] for p in points} == {"fold", "final"}
    assert {p["fold"] for p in points if p["stage"] == "fold"} == {0, 1, 2}
    assert [p["step"] for p in points] == list(range(1, len(points) + 1))
    sha = AdemModel.objects.get(name="queued").checkpoint_sha256
    from scoring.tasks import learned_train_task

    learned_train_task(run.pk)  # a redelivered message: the run is done, nothing is trained again
    run.refresh_from_db()
    assert run.progress == points and AdemModel.objects.get(name="queued").checkpoint_sha256 == sha


def _command(*args):
    out = StringIO()
    call_command("train_evaluator", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_command_prints_pooled_figures_and_gives_them_again_the_same(scored_usr):
    first = _command("--dataset", "usr-pc", "--name", "a", "--kind", "stacked", "--folds", "3", "--seed", "5")
    second = _command("--dataset", "usr-pc", "--name", "b", "--kind", "stacked", "--folds", "3", "--seed", "5")
    assert set(first["test"]) >= {"pearson", "spearman", "n"} and first["test"]["n"] == 240
    assert first["metric"] == "learned:a" and first["kind"] == "stacked"
    for key in ("pearson", "spearman"):
        assert round(first["test"][key], 3) == round(second["test"][key], 3)
    assert AdemModel.objects.get(name="a").checkpoint_sha256 == AdemModel.objects.get(name="b").checkpoint_sha256


def test_the_command_refuses_what_it_cannot_train(scored_usr):
    with pytest.raises(CommandError, match="not JSON"):
        call_command("train_evaluator", "--dataset", "usr-pc", "--name", "x", "--kind", "stacked", "--config", "{")
    with pytest.raises(CommandError, match="has no setting"):
        call_command(
            "train_evaluator", "--dataset", "usr-pc", "--name", "x", "--kind", "stacked", "--config", '{"nope": 1}'
        )
    with pytest.raises(CommandError, match="feature_precision must be one of auto, float32, int8, not 'fp16'"):
        call_command(
            "train_evaluator",
            *("--dataset", "usr-pc", "--name", "x", "--kind", "stacked"),
            *("--config", '{"feature_precision": "fp16"}'),
        )
    assert not AdemModel.objects.filter(name="x").exists()  # refused before any row is written


@pytest.mark.slow
def test_a_tiny_cross_encoder_trains_twice_to_the_same_figures_and_scores_the_api(scored_usr):
    config = json.dumps(TINY_CROSS_ENCODER)
    common = ("--dataset", "usr-pc", "--kind", "cross-encoder", "--folds", "2", "--seed", "3", "--config", config)
    first = _command("--name", "ce1", *common)
    second = _command("--name", "ce2", *common)
    for key in ("pearson", "spearman"):
        assert round(first["test"][key], 3) == round(second["test"][key], 3)
    assert first["test"]["n"] == 240 and first["metric"] == "learned:ce1"
    model = AdemModel.objects.get(name="ce1")
    scores = adem_score(model=model, triples=[(["do you like tea?"], "", "i love tea"), (["hi"], "", "no")])
    assert len(scores) == 2 and scores[0] != scores[1]


def test_a_run_whose_worker_died_is_trained_again_by_the_watchdog_from_its_queued_row(scored_usr, researcher, settings):
    from datetime import timedelta

    from django.utils import timezone

    from scoring.services import watchdog

    settings.RUN_STALL_SECONDS, settings.RUN_MAX_ATTEMPTS = 60, 3
    run = learned_train_queue(dataset=scored_usr, name="lost", owner=researcher, kind="stacked", folds=3)  # not sent
    dead_point = {"step": 1, "epoch": 1, "fold": 0, "stage": "fold", "train_loss": 9.0, "val_pearson": 0.0}
    TrainingRun.objects.filter(pk=run.pk).update(
        status=TrainingRun.Status.RUNNING,
        attempts=1,
        progress=[dead_point],
        heartbeat_at=timezone.now() - timedelta(seconds=120),
    )
    assert watchdog.training_runs_recover()["requeued"] == [run.pk]
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.DONE and run.attempts == 2
    assert dead_point not in run.progress and run.progress[0]["step"] == 1
    assert AdemModel.objects.get(name="lost").status == AdemModel.Status.READY


def test_the_run_page_phase_names_the_fold_and_its_validation_correlation(scored_usr, researcher):
    from scoring.services.adem.progress import phase_line

    run = TrainingRun.objects.create(
        kind=TrainingRun.Kind.TRAIN_LEARNED,
        owner=researcher,
        dataset=scored_usr,
        status=TrainingRun.Status.RUNNING,
        phase={"step": "training", "epoch": 2, "max_epochs": 3, "patience": 1, "folds": 5}
        | {"fold": 1, "stage": "fold", "val_pearson": 0.4321},
    )
    assert "fold 2 of 5, epoch 2 (validation r 0.432)" in phase_line(run)


@pytest.mark.parametrize("experiment", ["leave-one-system-out", "data-efficiency"])
def test_adem_experiment_runs_for_a_learned_kind(scored_usr, experiment):
    out = StringIO()
    call_command(
        "adem_experiment", experiment, "--dataset", "usr-pc", "--kind", "stacked", "--folds", "3", "--json", stdout=out
    )
    result = json.loads(out.getvalue())
    assert result["experiment"] == experiment and result["kind"] == "stacked"
    if experiment == "leave-one-system-out":
        assert len(result["systems"]) == 4
        assert all(row["trained_without"]["n"] == 60 for row in result["systems"])
    else:
        fractions = [row["fraction"] for row in result["fractions"]]
        assert fractions[-1] == 1.0 and all(row["test"]["n"] == 240 for row in result["fractions"])
    run = TrainingRun.objects.get(kind=TrainingRun.Kind.EXPERIMENT)
    assert run.status == TrainingRun.Status.DONE and run.params["evaluator"] == "stacked"
