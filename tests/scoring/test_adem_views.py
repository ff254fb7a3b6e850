"""ADEM pages and the scoring API: owners only, live progress, curve, token or session+CSRF auth."""

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Annotator, ExclusionDecision, Rating, Response
from scoring.models import AdemModel, TrainingRun
from scoring.services.adem.jobs import adem_experiment_queue
from scoring.services.adem.training import adem_train
from scoring.services.tokens import api_token_create
from tests.factories import load_dataset_records

FAST = {"max_epochs": 4, "patience": 4}
TRIPLE = {"context": ["do you like dogs ?"], "reference": "yes i do", "response": "i have a dog"}


@pytest.fixture(autouse=True)
def data_dir(settings, tmp_path):
    settings.RATELAB_DATA_DIR = tmp_path
    return tmp_path


@pytest.fixture
def trained(usr, researcher):
    return adem_train(dataset=usr, name="mine", encoder="glove", owner=researcher, config=FAST)


@pytest.mark.shared_data
def test_train_form_runs_the_task_and_the_run_page_shows_progress_and_curve(
    researcher_client, usr, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("scoring:adem_train"),
            {"name": "web", "dataset": usr.pk, "encoder": "glove", "variant": "full", "seed": 0},
        )
    run = TrainingRun.objects.get(kind="train")
    assert response.status_code == 302 and response.url == reverse("scoring:adem_run", args=[run.pk])
    assert run.status == "done" and run.adem_model.status == "ready"  # eager Celery in tests
    progress = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert progress["status"] == "done" and progress["progress"][0]["epoch"] == 1
    assert {"train_loss", "val_pearson"} <= progress["progress"][0].keys()
    svg = researcher_client.get(reverse("scoring:adem_run_curve", args=[run.pk]))
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    page = researcher_client.get(reverse("scoring:adem_run", args=[run.pk]))
    assert b"adem_run.js" in page.content and b"web" in page.content
    listing = researcher_client.get(reverse("scoring:adem_models")).content.decode()
    assert "web" in listing


@pytest.mark.shared_data
def test_a_training_that_would_be_refused_is_refused_on_the_form_leaving_no_failed_model(
    researcher_client, usr, django_capture_on_commit_callbacks
):
    kept = list(Response.objects.order_by("pk").values_list("pk", flat=True)[:5])
    Rating.objects.exclude(response__in=kept).delete()  # 5 rated responses (of the 30 needed) stay
    with django_capture_on_commit_callbacks(execute=True):
        page = researcher_client.post(
            reverse("scoring:adem_train"),
            {"name": "one", "dataset": usr.pk, "encoder": "glove", "variant": "full", "seed": 0},
        )
    assert page.status_code == 200 and "too few ratings: 5 rated responses" in page.content.decode()
    assert not AdemModel.objects.exists() and not TrainingRun.objects.exists()


@pytest.mark.shared_data
@pytest.mark.parametrize("seed", [-5, 10**20])
def test_a_seed_out_of_range_is_refused_at_its_field_leaving_no_model_or_run(
    researcher_client, usr, seed, django_capture_on_commit_callbacks
):
    form = {"dataset": usr.pk, "encoder": "glove", "variant": "full", "seed": seed}
    with django_capture_on_commit_callbacks(execute=True):
        trained = researcher_client.post(reverse("scoring:adem_train"), {**form, "name": "seeded"})
        tried = researcher_client.post(
            reverse("scoring:adem_experiments"), {**form, "experiment": "data-efficiency", "folds": 5}
        )
    for page in (trained, tried):
        assert page.status_code == 200
        errors = page.context["form"].errors
        assert list(errors) == ["seed"] and "or equal to" in errors["seed"][0]
    assert not AdemModel.objects.exists() and not TrainingRun.objects.exists()


@pytest.mark.shared_data
def test_training_on_a_study_whose_ratings_are_all_excluded_says_why_and_links_to_quality(
    researcher_client, usr, django_capture_on_commit_callbacks
):
    for survey in usr.surveys.all():
        for annotator in Annotator.objects.filter(ratings__survey=survey).distinct():
            ExclusionDecision.objects.create(
                survey=survey, annotator=annotator, excluded=True, source="manual", note="careless"
            )
    n_ratings = Rating.objects.filter(survey__dataset=usr).count()
    with django_capture_on_commit_callbacks(execute=True):
        page = researcher_client.post(
            reverse("scoring:adem_train"),
            {"name": "one", "dataset": usr.pk, "encoder": "glove", "variant": "full", "seed": 0},
        )
    text = page.content.decode()
    assert f"all {n_ratings} ratings of usr-pc (aspect &#x27;overall&#x27;) were excluded by the quality rules" in text
    assert reverse("annotation:quality_index") in text
    assert not AdemModel.objects.exists() and not TrainingRun.objects.exists()


@pytest.mark.shared_data
def test_train_form_queues_an_int8_minilm_model_and_refuses_int8_for_other_encoders(
    researcher_client, usr, django_capture_on_commit_callbacks
):
    form = {"name": "fast", "dataset": usr.pk, "variant": "full", "seed": 0, "precision": "int8"}
    refused = researcher_client.post(reverse("scoring:adem_train"), {**form, "encoder": "glove"})
    assert refused.status_code == 200 and "offered for the MiniLM encoder only" in refused.content.decode()
    assert not AdemModel.objects.exists()
    with django_capture_on_commit_callbacks(execute=False):  # the row and run only; training is tested elsewhere
        researcher_client.post(reverse("scoring:adem_train"), {**form, "encoder": "minilm"})
    model = AdemModel.objects.get(name="fast")
    assert model.precision == AdemModel.Precision.INT8 and model.encoder == "minilm"
    assert TrainingRun.objects.get(adem_model=model).params["precision"] == "int8"


def test_a_run_page_draws_no_empty_learning_curve(researcher_client, researcher):
    failed = TrainingRun.objects.create(kind="train", owner=researcher, status="failed", error="no")
    experiment = TrainingRun.objects.create(kind="experiment", owner=researcher, status="done", result={})
    running = TrainingRun.objects.create(kind="train", owner=researcher, status="running")
    pages = {
        run.kind + run.status: researcher_client.get(reverse("scoring:adem_run", args=[run.pk])).content.decode()
        for run in (failed, experiment, running)
    }
    assert 'id="run-curve"' not in pages["trainfailed"] and "ended before its first epoch" in pages["trainfailed"]
    assert 'id="run-curve"' not in pages["experimentdone"] and "first epoch" not in pages["experimentdone"]
    assert 'id="run-curve"' in pages["trainrunning"]  # filled in as the epochs come


@pytest.mark.shared_data
@pytest.mark.shared_data
def test_the_model_page_names_the_checkpoint_file_but_not_where_the_server_keeps_it(
    researcher_client, trained, data_dir
):
    page = researcher_client.get(reverse("scoring:adem_model", args=[trained.pk])).content.decode()
    assert f"{trained.pk}-mine.ckpt" in page and trained.checkpoint_sha256[:16] in page
    assert str(data_dir) not in page and trained.checkpoint_path not in page


def test_other_researchers_see_no_model_or_run(client, other_researcher, trained):
    client.force_login(other_researcher)
    assert client.get(reverse("scoring:adem_model", args=[trained.pk])).status_code == 404
    assert client.get(reverse("scoring:adem_model_by_name", args=["mine"])).status_code == 404
    assert "mine" not in client.get(reverse("scoring:adem_models")).content.decode()


@pytest.mark.shared_data
def test_score_api_with_a_bearer_token(trained, researcher):
    key = api_token_create(user=researcher)
    response = Client().post(
        reverse("scoring:adem_score", args=["mine"]),
        data=json.dumps({"triples": [TRIPLE, {**TRIPLE, "response": "no"}]}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["metric"] == "adem:mine" and len(body["scores"]) == 2


@pytest.mark.shared_data
def test_score_api_refuses_bad_json_bad_tokens_anonymous_and_other_owners(trained, other_researcher, researcher):
    url = reverse("scoring:adem_score", args=["mine"])
    key = api_token_create(user=researcher)
    bad = Client().post(
        url, data="{not json", content_type="application/json", headers={"Authorization": f"Bearer {key}"}
    )
    assert bad.status_code == 400 and "not JSON" in bad.json()["error"]
    shape = Client().post(url, data="[1]", content_type="application/json", headers={"Authorization": f"Bearer {key}"})
    assert shape.status_code == 400 and "triples" in shape.json()["error"]
    missing = Client().post(
        url,
        data=json.dumps({"triples": [{"context": ["a"]}]}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert missing.status_code == 400 and "missing field" in missing.json()["error"]
    assert (
        Client()
        .post(url, data="{}", content_type="application/json", headers={"Authorization": "Bearer nope"})
        .status_code
        == 401
    )
    assert Client().post(url, data="{}", content_type="application/json").status_code == 401
    other = api_token_create(user=other_researcher)
    assert (
        Client()
        .post(url, data="{}", content_type="application/json", headers={"Authorization": f"Bearer {other}"})
        .status_code
        == 404
    )


@pytest.mark.shared_data
def test_score_api_answers_json_404_alike_for_an_unknown_and_another_researchers_model(trained, other_researcher):
    key = api_token_create(user=other_researcher)
    urls = [
        reverse("scoring:adem_score", args=["mine"]),  # the owner's name, not the caller's
        reverse("scoring:adem_score", args=["nobody-has-this"]),
        reverse("scoring:adem_model_score", args=[trained.pk]),  # the owner's model by id
        reverse("scoring:adem_model_score", args=[trained.pk + 1000]),
    ]
    answers = []
    for url in urls:
        response = Client().post(
            url,
            data=json.dumps({"triples": [TRIPLE]}),
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}"},
        )
        assert response.status_code == 404 and response["Content-Type"] == "application/json", url
        answers.append(response.json())
    assert answers == [{"error": "no such ADEM model"}] * len(urls)


@pytest.mark.shared_data
def test_score_api_with_a_session_needs_the_csrf_token(trained, researcher):
    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    url = reverse("scoring:adem_score", args=["mine"])
    payload = json.dumps({"triples": [TRIPLE]})
    assert client.post(url, data=payload, content_type="application/json").status_code == 403
    client.get(reverse("scoring:adem_train"))  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    ok = client.post(url, data=payload, content_type="application/json", headers={"X-CSRFToken": token})
    assert ok.status_code == 200 and len(ok.json()["scores"]) == 1


@pytest.mark.shared_data
def test_experiment_page_runs_data_efficiency_and_shows_the_table(
    researcher_client, usr, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr("scoring.adem.experiments.FRACTIONS", (0.25, 1.0))
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(
            reverse("scoring:adem_experiments"),
            {
                "experiment": "data-efficiency",
                "dataset": usr.pk,
                "encoder": "glove",
                "variant": "full",
                "seed": 0,
                "folds": 2,
            },
        )
    run = TrainingRun.objects.get(kind="experiment")
    assert response.status_code == 302 and run.status == "done", run.error
    assert [row["fraction"] for row in run.result["fractions"]] == [0.25, 1.0]
    assert all(row["test"]["n"] == 240 for row in run.result["fractions"])
    page = researcher_client.get(reverse("scoring:adem_experiments")).content.decode()
    assert "100%" in page and "25%" in page


@pytest.mark.shared_data
def test_a_second_submit_of_an_open_experiment_starts_nothing_and_lands_on_the_first_run(
    researcher_client, researcher, other_researcher, usr, django_capture_on_commit_callbacks
):
    form = {"experiment": "data-efficiency", "dataset": usr.pk, "encoder": "glove", "variant": "full", "seed": 0}
    url = reverse("scoring:adem_experiments")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        first = researcher_client.post(url, {**form, "folds": 5})
        run = TrainingRun.objects.get(kind="experiment")
        again = researcher_client.post(url, {**form, "folds": 5}, follow=True)
    assert first.url == reverse("scoring:adem_run", args=[run.pk]) and len(queued) == 1
    assert again.redirect_chain == [(reverse("scoring:adem_run", args=[run.pk]), 302)]
    assert f"already queued on {usr.name} with these settings (run {run.pk}): nothing new was started" in (
        again.content.decode()
    )
    assert TrainingRun.objects.count() == 1
    with django_capture_on_commit_callbacks(execute=False) as queued:
        other_folds = researcher_client.post(url, {**form, "folds": 3})  # other settings: a run of its own
        theirs = adem_experiment_queue(dataset=usr, owner=other_researcher, experiment="data-efficiency")
    assert other_folds.status_code == 302 and len(queued) == 2 and theirs.owner == other_researcher
    TrainingRun.objects.filter(pk=run.pk).update(status="failed")  # once it ends, the same may run again
    with django_capture_on_commit_callbacks(execute=False) as queued:
        researcher_client.post(url, {**form, "folds": 5})
    assert len(queued) == 1 and TrainingRun.objects.filter(owner=researcher, params__folds=5).count() == 2


def test_pretrain_form_takes_an_uploaded_corpus_and_records_the_run(
    researcher_client, django_capture_on_commit_callbacks, data_dir
):
    corpus = "hi there\nhello , how are you ?\nfine thanks\n\nwhat do you do ?\ni teach music\nnice\n"
    upload = SimpleUploadedFile("tiny.txt", corpus.encode(), content_type="text/plain")
    with django_capture_on_commit_callbacks(execute=True):
        response = researcher_client.post(reverse("scoring:adem_pretrain"), {"corpus": upload, "epochs": 1})
    run = TrainingRun.objects.get(kind="pretrain")
    assert response.status_code == 302 and run.status == "done", run.error
    assert run.result["dialogues"] == 2 and run.result["total_steps"] == 1
    assert (data_dir / "adem" / "vhred" / f"{run.result['checkpoint_sha256']}.ckpt").is_file()
    progress = researcher_client.get(reverse("scoring:adem_run_progress", args=[run.pk])).json()
    assert progress["result"]["checkpoint_sha256"] == run.result["checkpoint_sha256"]
    assert str(data_dir) not in json.dumps(progress)  # no server path reaches the page


UNREADABLE_CORPORA = {
    "picture.jsonl": (b"\x89PNG\r\n\x1a\n\x00\x01", "picture.jsonl is not UTF-8 text (byte 0x89 at offset 0)"),
    "talks.jsonl": (
        b'["hi", "hello"]\n{"turns": 3}\n',
        'talks.jsonl line 2: expected a list of turns or {"turns": [...]}',
    ),
    "one-liners.txt": (b"hi\n\nhello\n", "one-liners.txt holds no dialogue of two or more turns"),
}


@pytest.mark.parametrize("name", UNREADABLE_CORPORA)
def test_pretrain_form_refuses_a_corpus_it_cannot_read_and_starts_nothing(
    researcher_client, django_capture_on_commit_callbacks, data_dir, name
):
    content, message = UNREADABLE_CORPORA[name]
    upload = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = researcher_client.post(reverse("scoring:adem_pretrain"), {"corpus": upload, "epochs": 1})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200 and message in page and "Nothing was started." in page
    assert not TrainingRun.objects.exists() and queued == []
    assert not (data_dir / "adem" / "corpora").exists()  # the refused file is not kept either


def test_the_model_page_lists_hyper_parameters_by_name_not_as_a_python_dict(client, researcher):
    response = {"system": "bot", "text": "hey"}
    record = {"context_id": "c1", "context": ["hi"], "references": ["hello"], "responses": [response]}
    dataset = load_dataset_records(records=[record], name="toy", owner=researcher)
    model = AdemModel.objects.create(
        owner=researcher, dataset=dataset, name="mine", status="ready", config={"lr": 0.01, "patience": 15}
    )
    client.force_login(researcher)
    page = client.get(reverse("scoring:adem_model", args=[model.pk])).content.decode()
    row = " ".join(page[page.index("Hyper-parameters") :].split("</tr>")[0].split())
    assert "<code>lr</code> = 0.01, <code>patience</code> = 15" in row
    assert "{" not in row and "&#x27;" not in row


def test_the_model_page_says_compute_metrics_computes_its_metric_and_links_to_the_metrics_page(
    client, researcher, admin_user
):
    response = {"system": "bot", "text": "hey"}
    record = {"context_id": "c1", "context": ["hi"], "references": ["hello"], "responses": [response]}
    dataset = load_dataset_records(records=[record], name="toy", owner=researcher)
    model = AdemModel.objects.create(
        owner=researcher, dataset=dataset, name="mine", status="ready", checkpoint_sha256="ab" * 32
    )
    metrics_page = reverse("scoring:dataset_metrics", args=[dataset.pk])
    client.force_login(researcher)
    page = client.get(reverse("scoring:adem_model", args=[model.pk])).content.decode()
    note = " ".join(page[page.index('id="adem-metric-note"') :].split("</p>")[0].split())
    assert "Compute metrics computes <code>adem:mine</code> for the datasets you own," in note
    assert f'<a href="{metrics_page}">Metrics page of toy</a>' in note
    assert f'<a href="{reverse("scoring:metrics_index")}">Metrics</a>.' in note
    client.force_login(admin_user)  # staff read every owner's model: the metric is its owner's datasets'
    page = client.get(reverse("scoring:adem_model", args=[model.pk])).content.decode()
    assert f"for the datasets {researcher.username} owns," in " ".join(page.split())
