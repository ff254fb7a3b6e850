"""ADEM through the database: training from human_scores, refusals, the registry, scoring, commands."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotator, ExclusionDecision, Rating, Reference, Response
from scoring.adem.encoders.minilm import MiniLmEncoder
from scoring.models import AdemModel, MetricScore
from scoring.services.adem.jobs import adem_train_queue
from scoring.services.adem.refusals import AdemRefusal
from scoring.services.adem.scoring import adem_model_named, adem_score, adem_scorer
from scoring.services.adem.training import adem_train
from scoring.services.metrics.chunks import metric_chunk_compute
from scoring.services.metrics.compute import MetricsUpToDate, metric_names, metrics_compute

FAST = {"max_epochs": 6, "patience": 6}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


@pytest.mark.shared_data
def test_adem_train_registers_a_ready_model_with_its_training_data_and_results(usr, researcher):
    model = adem_train(dataset=usr, name="usr-glove", encoder="glove", seed=1, owner=researcher, config=FAST)
    model.refresh_from_db()
    assert model.status == AdemModel.Status.READY
    assert model.training_data["responses"] == 240 and model.training_data["contexts"] == 60
    assert model.training_data["surveys"] == ["usr-overall"] and model.training_data["apply_exclusions"] is True
    assert len(model.training_data["systems"]) == 4
    assert model.results["test"]["n"] == model.results["split"]["test"]
    assert model.config["gamma"] == 0.075 and model.config["lr"] == 0.01 and model.config["batch_size"] == 32
    assert len(model.checkpoint_sha256) == 64
    assert model.metric_name == "adem:usr-glove"


@pytest.mark.shared_data
def test_adem_score_matches_for_dicts_and_tuples_and_text_contexts(usr):
    adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    triples = [
        {"context": ["hi , how are you ?", "good , you ?"], "reference": "fine thanks", "response": "i am fine"},
        (["hi , how are you ?", "good , you ?"], "fine thanks", "i like trains"),
    ]
    scores = adem_score(model="m", triples=triples)
    assert len(scores) == 2 and scores[0] != scores[1]
    as_text = adem_score(model="m", triples=[{**triples[0], "context": "hi , how are you ?\ngood , you ?"}])
    assert as_text[0] == pytest.approx(scores[0])
    with pytest.raises(AdemRefusal, match="missing field 'reference'"):
        adem_score(model="m", triples=[{"context": [], "response": "x"}])
    with pytest.raises(AdemRefusal, match="no ADEM model named 'nope'"):
        adem_score(model="nope", triples=[])


@pytest.mark.shared_data
def test_adem_metric_writes_one_versioned_score_per_response(usr):
    model = adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    run = metrics_compute(dataset=usr, metrics=["adem:m"], dispatch=False)
    for chunk in run.chunks.all():
        metric_chunk_compute(chunk=chunk)
    assert MetricScore.objects.filter(metric="adem:m", value__isnull=False).count() == 240
    rows = MetricScore.objects.filter(metric="adem:m")
    assert rows.count() == 240 and {r.version for r in rows} == {model.checkpoint_sha256[:12]}
    assert all(r.value is not None for r in rows)


@pytest.mark.shared_data
def test_training_refuses_a_name_that_is_taken(usr):
    adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    with pytest.raises(AdemRefusal, match="you already have an ADEM model named 'm'"):
        adem_train(dataset=usr, name="m", encoder="glove", config=FAST)


@pytest.mark.shared_data
def test_training_refuses_too_few_ratings(usr):
    keep = list(Response.objects.values_list("pk", flat=True)[:20])
    Rating.objects.exclude(response_id__in=keep).delete()
    with pytest.raises(AdemRefusal, match="too few ratings: 20 rated responses"):
        adem_train(dataset=usr, name="m", encoder="glove")


@pytest.mark.shared_data
def test_training_refuses_ratings_of_a_single_system(usr):
    Rating.objects.exclude(response__system__name="Seq2Seq").delete()
    # On one system alone the annotators agree too little (kappa < 0.2), so exclusions would
    # empty the data first; the single-system refusal is about the data, so count every rating.
    with pytest.raises(AdemRefusal, match="single system"):
        adem_train(dataset=usr, name="m", encoder="glove", apply_exclusions=False)


@pytest.mark.shared_data
def test_training_refuses_responses_without_references_except_for_c_adem(usr):
    Reference.objects.filter(context__external_id__in=["pc00", "pc01"]).delete()
    with pytest.raises(AdemRefusal, match="8 rated responses have no reference"):
        adem_train(dataset=usr, name="m", encoder="glove")
    model = adem_train(dataset=usr, name="m", encoder="glove", variant="context", config=FAST)
    assert model.training_data["responses"] == 240


@pytest.mark.shared_data
def test_vhred_encoder_without_pretraining_is_refused(usr):
    with pytest.raises(AdemRefusal, match=r"run `manage\.py pretrain_vhred` first"):
        adem_train(dataset=usr, name="m", encoder="vhred")


@pytest.mark.shared_data
def test_train_adem_command_prints_test_figures_as_json_with_pooled_folds(usr):
    out = StringIO()
    call_command("train_adem", dataset="usr-pc", name="cv", encoder="glove", folds=3, json=True, stdout=out)
    summary = json.loads(out.getvalue())
    test = summary["test"]
    assert set(test) == {"pearson", "pearson_p", "spearman", "spearman_p", "n"}
    assert test["n"] == 240 and -1 <= test["pearson"] <= 1 and 0 <= test["spearman_p"] <= 1
    assert summary["folds"] == 3 and summary["system_level"]["n"] == 4
    predictions = AdemModel.objects.get(name="cv").results["predictions"]
    assert sorted(p["response_id"] for p in predictions) == sorted(Response.objects.values_list("pk", flat=True))


@pytest.mark.shared_data
def test_train_adem_command_reports_refusals_as_command_errors(usr):
    with pytest.raises(CommandError, match="no dataset named 'missing'"):
        call_command("train_adem", dataset="missing", name="m")
    Rating.objects.exclude(response__system__name="Seq2Seq").delete()
    with pytest.raises(CommandError, match="single system"):
        call_command("train_adem", dataset="usr-pc", name="m", encoder="glove", no_exclusions=True)
    kept = list(Response.objects.order_by("pk").values_list("pk", flat=True)[:5])
    Rating.objects.exclude(response__in=kept).delete()
    with pytest.raises(CommandError, match="too few ratings"):
        call_command("train_adem", dataset="usr-pc", name="m", encoder="glove", no_exclusions=True)


@pytest.mark.shared_data
def test_score_adem_command_scores_a_jsonl_file(usr, tmp_path):
    adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    lines = [
        {"context": ["do you like dogs ?"], "reference": "yes i love dogs", "response": "i have two dogs"},
        {"context": ["do you like dogs ?"], "reference": "yes i love dogs", "response": "the sky"},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    out = StringIO()
    call_command("score_adem", str(path), model="m", stdout=out)
    scored = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [s["response"] for s in scored] == ["i have two dogs", "the sky"]
    assert all(isinstance(s["score"], float) for s in scored)
    path.write_text('{"context": ["x"]}\n')
    with pytest.raises(CommandError, match="line 1: expected an object with context, reference and response"):
        call_command("score_adem", str(path), model="m")


@pytest.mark.shared_data
def test_replaced_checkpoint_is_refused_when_scoring(usr, data_dir):
    model = adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    path = Path(model.checkpoint_path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))
    AdemModel.objects.filter(pk=model.pk).update(checkpoint_sha256="0" * 64)  # a fresh cache key
    with pytest.raises(AdemRefusal, match=r"cannot be used: .* corrupt"):
        adem_score(model="m", triples=[(["a"], "b", "c")])


@pytest.mark.shared_data
def test_leave_one_system_out_command_scores_each_system_trained_with_and_without_it(usr):
    out = StringIO()
    call_command(
        "adem_experiment", "leave-one-system-out", dataset="usr-pc", encoder="glove", folds=2, json=True, stdout=out
    )
    result = json.loads(out.getvalue())
    assert [row["system"] for row in result["systems"]] == sorted(
        set(Response.objects.values_list("system__name", flat=True))
    )
    for row in result["systems"]:
        assert row["trained_with"]["n"] == row["trained_without"]["n"] == 60


@pytest.mark.shared_data
def test_an_int8_minilm_model_records_its_precision_and_scores_with_int8_vectors(usr):
    out = StringIO()
    call_command("train_adem", dataset="usr-pc", name="fast", encoder="minilm", precision="int8", json=True, stdout=out)
    assert json.loads(out.getvalue())["precision"] == "int8"
    model = AdemModel.objects.get(name="fast")
    assert model.precision == AdemModel.Precision.INT8
    assert adem_scorer(model=model).encoder_id == MiniLmEncoder(precision="int8").id
    scores = adem_score(model="fast", triples=[(["do you like dogs ?"], "yes i do", "i have a dog")] * 2)
    assert len(scores) == 2 and scores[0] == pytest.approx(scores[1])


@pytest.mark.shared_data
def test_int8_precision_is_refused_for_encoders_other_than_minilm(usr):
    with pytest.raises(AdemRefusal, match="minilm encoder only"):
        adem_train(dataset=usr, name="m", encoder="glove", precision="int8")
    with pytest.raises(AdemRefusal, match="unknown precision 'half'"):
        adem_train(dataset=usr, name="m", encoder="minilm", precision="half")
    assert not AdemModel.objects.exists()


@pytest.mark.shared_data
def test_two_researchers_may_both_name_a_model_m_and_each_name_means_ones_own(
    usr, researcher, other_researcher, tmp_path
):
    mine = adem_train(dataset=usr, name="m", encoder="glove", owner=researcher, config=FAST)
    theirs = adem_train(dataset=usr, name="m", encoder="glove", owner=other_researcher, seed=3, config=FAST)
    assert mine.checkpoint_path != theirs.checkpoint_path  # one file per model, not per name
    assert adem_model_named("m", owner=other_researcher) == theirs
    with pytest.raises(AdemRefusal, match="several researchers have an ADEM model named 'm'"):
        adem_score(model="m", triples=[])
    lines = tmp_path / "triples.jsonl"
    lines.write_text(json.dumps({"context": ["hi"], "reference": "yes", "response": "no"}) + "\n")
    with pytest.raises(CommandError, match="--owner"):
        call_command("score_adem", str(lines), model="m")
    out = StringIO()
    call_command("score_adem", str(lines), model="m", owner="bob", stdout=out)
    assert json.loads(out.getvalue())["score"] == pytest.approx(
        adem_score(model=theirs, triples=[(["hi"], "yes", "no")])[0]
    )
    # metric adem:m of alice's dataset is alice's model, and bob's models are not among her metrics
    assert metric_names(owner=researcher.pk).count("adem:m") == 1
    adem_train(dataset=usr, name="bobs-only", encoder="glove", owner=other_researcher, config=FAST)
    assert "adem:bobs-only" not in metric_names(owner=researcher.pk)
    with pytest.raises(KeyError):
        metric_names(["adem:bobs-only"], owner=researcher.pk)
    run = metrics_compute(dataset=usr, metrics=["adem:m"], dispatch=False)
    assert run.versions == {"adem:m": mine.checkpoint_sha256[:12]}


@pytest.mark.shared_data
def test_a_model_takes_the_datasets_owner_and_is_refused_when_there_is_none(usr, researcher):
    assert adem_train(dataset=usr, name="m", encoder="glove", config=FAST).owner == researcher
    usr.owner = None
    usr.save(update_fields=["owner"])
    with pytest.raises(AdemRefusal, match="needs an owner"):
        adem_train(dataset=usr, name="other", encoder="glove", config=FAST)


def _exclude_everyone(dataset):
    for survey in dataset.surveys.all():
        for annotator in Annotator.objects.filter(ratings__survey=survey).distinct():
            ExclusionDecision.objects.create(
                survey=survey, annotator=annotator, excluded=True, source="manual", note="test"
            )


@pytest.mark.shared_data
def test_training_on_all_excluded_ratings_says_so_before_creating_any_model(usr, researcher):
    _exclude_everyone(usr)
    n_ratings = Rating.objects.filter(survey__dataset=usr, aspect="overall").count()
    with pytest.raises(AdemRefusal, match=f"all {n_ratings} ratings of usr-pc .* were excluded by the quality rules"):
        adem_train_queue(dataset=usr, name="m", owner=researcher, encoder="glove")
    assert not AdemModel.objects.exists()


@pytest.mark.shared_data
def test_computing_metrics_that_are_all_up_to_date_starts_no_run(usr):
    run = metrics_compute(dataset=usr, metrics=["bleu1", "rouge_l"], dispatch=False)
    for chunk in run.chunks.all():
        metric_chunk_compute(chunk=chunk)
    with pytest.raises(MetricsUpToDate, match="All 2 metrics are up to date"):
        metrics_compute(dataset=usr, metrics=["bleu1", "rouge_l"], refuse_if_up_to_date=True)
    assert usr.metric_runs.count() == 1


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("triple", "field"),
    [
        ({"context": ["hi"], "reference": "yes", "response": "  "}, "response"),
        ({"context": [], "reference": "yes", "response": "no"}, "context"),
        ({"context": ["", " "], "reference": "yes", "response": "no"}, "context"),
        ({"context": "", "reference": "yes", "response": "no"}, "context"),
        ({"context": ["hi"], "reference": "", "response": "no"}, "reference"),
    ],
)
def test_scoring_refuses_an_empty_field_and_names_it(usr, triple, field):
    model = adem_train(dataset=usr, name="m", encoder="glove", config=FAST)
    with pytest.raises(AdemRefusal, match=f"triple 1: the {field} is empty") as refused:
        adem_score(model=model, triples=[{"context": ["a"], "reference": "b", "response": "c"}, triple])
    assert refused.value.field == field and refused.value.index == 1
