"""Metric signatures: what produced a score, recorded per run, carried by the report and every export."""

import io
import json
import zipfile

import pytest
from django.conf import settings
from django.urls import reverse

import scoring.metrics as engine
from analysis.models import Report
from analysis.services.build import report_build
from analysis.services.exports import table, to_csv, to_latex
from annotation.models import Rating, Response
from config.celery import app as celery_app
from scoring.metrics import signature
from scoring.metrics.registry import Metric
from scoring.models import AdemModel
from scoring.services.metrics import compute as services
from scoring.services.metrics.signatures import adem_signature, dataset_signatures, metric_signature
from tests.annotation.collected import build_collected_survey

pytestmark = pytest.mark.django_db


def test_bleu4s_signature_names_its_tokenizer_smoothing_version_and_library():
    line = signature.metric_signature(engine.get("bleu4"))
    fields = line.split("|")
    assert fields[0] == "bleu4"
    assert {"tok:whitespace", "smooth:none", "n:4", "v:1"} <= set(fields)
    assert f"numpy:{signature.library_version('numpy')}" in fields


def test_a_no_stopword_variant_adds_the_stopword_list_and_its_bases_libraries():
    fields = signature.metric_signature(engine.get("meteor_nostop")).split("|")
    assert "stopwords:stop-words==2018.7.23" in fields and "v:1+sw1" in fields
    assert any(f.startswith("pycocoevalcap:") for f in fields) and any(f.startswith("stop-words:") for f in fields)


def test_an_embedding_metric_carries_the_hash_of_its_vector_files():
    fields = signature.metric_signature(engine.get("embedding_average")).split("|")
    hashes = [f for f in fields if f.startswith("hash:")]
    assert len(hashes) == 1 and len(hashes[0]) == len("hash:") + signature.HASH_CHARS


def test_a_signature_changes_when_the_version_an_option_or_a_library_changes(monkeypatch):
    base = engine.get("bleu4")
    line = signature.metric_signature(base)
    bumped = Metric(base.name, "2", base.family, base.params, base.description)
    assert signature.metric_signature(bumped) != line and "v:2" in signature.metric_signature(bumped)
    other_tokens = Metric(base.name, base.version, base.family, {**base.params, "tokens": "ptb"})
    assert "tok:ptb" in signature.metric_signature(other_tokens).split("|")
    monkeypatch.setattr(signature, "library_version", lambda name: "9.9.9")
    assert "numpy:9.9.9" in signature.metric_signature(base).split("|")


def test_a_separator_inside_an_option_cannot_forge_a_field():
    assert signature.build("m", "1", {"args": "a|v:99"}) == "m|args:a/v:99|v:1"


def test_an_adem_signature_names_model_encoder_and_checkpoint_hash_but_no_path(researcher):
    model = AdemModel.objects.create(
        name="usr-adem", owner=researcher, encoder=AdemModel.Encoder.MINILM, status=AdemModel.Status.READY,
        checkpoint_path="/srv/secret-folder/alice/model.pt", checkpoint_sha256="ab" * 32,
    )  # fmt: skip
    line = adem_signature(model)
    fields = line.split("|")
    assert fields[0] == "adem:usr-adem"
    assert {"encoder:minilm", "v:abababababab", "hash:abababababab", "variant:full"} <= set(fields)
    assert line == metric_signature("adem:usr-adem", owner=researcher.pk)
    model.checkpoint_sha256 = "cd" * 32
    assert adem_signature(model) != line  # retrained: another checkpoint, another signature
    for secret in ("/srv", "secret-folder", researcher.username, settings.SECRET_KEY, str(settings.MEDIA_ROOT)):
        assert secret not in line


def test_no_signature_carries_a_path_a_user_or_a_setting(researcher):
    for metric in engine.all_metrics():
        line = signature.metric_signature(metric)
        for secret in (settings.SECRET_KEY, str(settings.BASE_DIR), str(settings.MEDIA_ROOT), researcher.username):
            assert secret not in line, metric.name


@pytest.fixture
def scored(researcher, django_capture_on_commit_callbacks, monkeypatch):
    """The collected survey, with bleu2 and response_len computed by a metric run."""
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    survey = build_collected_survey(owner=researcher)
    with django_capture_on_commit_callbacks(execute=True):
        run = services.metrics_compute(dataset=survey.dataset, metrics=["bleu2", "response_len"])
    run.refresh_from_db()
    assert Rating.objects.filter(survey=survey).exists() and Response.objects.exists()
    return survey, run


def test_a_run_records_each_metrics_signature_and_the_report_carries_it(scored):
    survey, run = scored
    assert run.signatures == {name: signature.metric_signature(engine.get(name)) for name in ("bleu2", "response_len")}
    data = report_build(dataset=survey.dataset, n_boot=0)
    assert data["signatures"] == run.signatures
    assert dataset_signatures(dataset=survey.dataset, metrics=["response_len"]) == {
        "response_len": run.signatures["response_len"]
    }


def test_the_recorded_signature_wins_over_what_the_code_would_say_now(scored):
    survey, run = scored
    run.signatures = {**run.signatures, "bleu2": "bleu2|v:0|recorded-then"}
    run.save()
    assert report_build(dataset=survey.dataset, n_boot=0)["signatures"]["bleu2"] == "bleu2|v:0|recorded-then"


def test_every_export_carries_the_signatures(scored):
    survey, run = scored
    data = report_build(dataset=survey.dataset, n_boot=0)
    header, rows = table(data, "utterance_level")
    assert header[-1] == "signature" and {row[0]: row[-1] for row in rows} == run.signatures
    assert table(data, "signatures")[1] == [[name, run.signatures[name]] for name in data["metrics"]]
    assert "# signatures" in to_csv(data)
    latex = to_latex(data)
    assert "Metric signatures:" in latex and r"\texttt{bleu2|" in latex


def test_the_report_page_zip_and_metrics_page_show_the_signatures(
    scored, researcher_client, django_capture_on_commit_callbacks
):
    survey, run = scored
    url = reverse("analysis:dataset_report", args=[survey.dataset.pk])
    with django_capture_on_commit_callbacks(execute=True):
        researcher_client.get(url)
    body = researcher_client.get(url).content.decode()
    assert body.count("Metric signatures (2)") >= 3  # under the tables of metrics' figures
    assert f"<code>{run.signatures['bleu2']}</code>" in body
    report = Report.objects.get(dataset=survey.dataset, survey=None)
    archive = zipfile.ZipFile(
        io.BytesIO(researcher_client.get(reverse("analysis:report_export", args=[report.pk, "zip"])).content)
    )
    assert "signatures.csv" in archive.namelist()
    assert json.loads(archive.read("report.json"))["signatures"] == run.signatures
    page = researcher_client.get(reverse("scoring:dataset_metrics", args=[survey.dataset.pk])).content.decode()
    assert run.signatures["bleu2"] in page
