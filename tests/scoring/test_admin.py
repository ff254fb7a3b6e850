"""The scoring models in the admin: registered, read-only, linked to the researcher pages."""

import warnings

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from annotation.models import Conversation, ConversationTurn
from scoring.models import (
    AdemModel,
    ApiToken,
    ConversationMetricScore,
    Judge,
    JudgeCacheEntry,
    JudgeUsage,
    MetricChunk,
    MetricRun,
    MetricScore,
    TrainingRun,
    TurnMetricScore,
)
from scoring.services.tokens import api_token_create
from tests.annotation.files import SMALL_DATASET
from tests.factories import load_dataset_records

SCORING_MODELS = list(apps.get_app_config("scoring").get_models())


@pytest.fixture
def results(admin_user, researcher):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=researcher)
    model = AdemModel.objects.create(
        name="demo", owner=researcher, dataset=dataset, status="ready", results={"test": {"pearson": 0.41234}}
    )
    run = TrainingRun.objects.create(kind="train", owner=researcher, adem_model=model, dataset=dataset)
    metric_run = MetricRun.objects.create(dataset=dataset, metrics=["bleu1"], total_chunks=1)
    MetricChunk.objects.create(run=metric_run, index=0, response_ids=[1])
    response = dataset.contexts.first().responses.first()
    MetricScore.objects.create(response=response, metric="bleu1", version="1", value=0.5)
    conversation = Conversation.objects.create(dataset=dataset, external_id="d1", position=0, system=response.system)
    ConversationMetricScore.objects.create(conversation=conversation, metric="distinct_1", version="1", value=0.5)
    turn = ConversationTurn.objects.create(conversation=conversation, index=0, speaker="system", text="Hello!")
    TurnMetricScore.objects.create(turn=turn, metric="response_len", version="1", value=1.0)
    api_token_create(user=researcher, name="script")
    judge = Judge.objects.create(owner=researcher, name="local", base_url="http://127.0.0.1:9/v1", model="tiny")
    JudgeCacheEntry.objects.create(judge=judge, template_version="rating-1", prompt_hash="ab" * 32, values=[4], mean=4)
    JudgeUsage.objects.create(judge=judge, run=metric_run, prompts=1, requests=1)
    return {"model": model, "run": run, "metric_run": metric_run, "judge": judge}


def test_every_scoring_model_is_in_the_admin():
    assert [m.__name__ for m in SCORING_MODELS if m not in admin.site._registry] == []


@pytest.mark.parametrize("model", SCORING_MODELS, ids=lambda m: m.__name__)
def test_scoring_changelists_render_searchable_and_offer_no_add_or_edit(client, admin_user, results, model):
    client.force_login(admin_user)
    url = reverse(f"admin:scoring_{model._meta.model_name}_changelist")
    page = client.get(url)
    assert page.status_code == 200 and client.get(url, {"q": "demo"}).status_code == 200
    assert reverse(f"admin:scoring_{model._meta.model_name}_add") not in page.content.decode()
    assert client.get(reverse(f"admin:scoring_{model._meta.model_name}_add")).status_code == 403
    row = model.objects.first()
    change_url = reverse(f"admin:scoring_{model._meta.model_name}_change", args=[row.pk])
    detail = client.get(change_url)
    assert detail.status_code == 200 and 'type="submit" value="Save"' not in detail.content.decode()


def test_a_post_to_the_change_form_changes_no_result(client, admin_user, results):
    client.force_login(admin_user)
    model = results["model"]
    url = reverse("admin:scoring_ademmodel_change", args=[model.pk])
    response = client.post(url, {"name": "renamed", "status": "failed", "results": "{}"})
    model.refresh_from_db()
    assert response.status_code == 403 and model.name == "demo" and model.results["test"]["pearson"] == 0.41234


def test_admin_rows_link_to_the_researcher_pages(client, admin_user, results):
    client.force_login(admin_user)
    models_page = client.get(reverse("admin:scoring_ademmodel_changelist")).content.decode()
    assert reverse("scoring:adem_model", args=[results["model"].pk]) in models_page and "0.412" in models_page
    runs_page = client.get(reverse("admin:scoring_trainingrun_changelist")).content.decode()
    assert reverse("scoring:adem_run", args=[results["run"].pk]) in runs_page
    metric_runs = client.get(reverse("admin:scoring_metricrun_changelist")).content.decode()
    assert reverse("scoring:dataset_metrics", args=[results["metric_run"].dataset_id]) in metric_runs
    # another researcher's judge: its page is its owner's alone (tests/scoring/test_admin_page_links.py)
    judges = client.get(reverse("admin:scoring_judge_changelist")).content.decode()
    assert reverse("scoring:judge_detail", args=[results["judge"].pk]) not in judges


def test_the_token_admin_never_shows_the_keys_hash_and_deleting_revokes(client, admin_user, results):
    client.force_login(admin_user)
    token = ApiToken.objects.get()
    page = client.get(reverse("admin:scoring_apitoken_change", args=[token.pk])).content.decode()
    assert token.key_sha256 not in page and "script" in page
    client.post(reverse("admin:scoring_apitoken_delete", args=[token.pk]), {"post": "yes"})
    assert not ApiToken.objects.exists()


def test_admin_names_read_as_people_write_them(client, admin_user):
    client.force_login(admin_user)
    index = client.get(reverse("admin:index")).content.decode()
    for name in ["ADEM models", "ADEM runs", "API tokens", "MTurk HITs", "MTurk assignments", "HITs", "HIT pages"]:
        assert f">{name}<" in index, name
    for wrong in ["M turk", "Adem models", "Api tokens", ">Hits<", "Hit pages"]:
        assert wrong not in index, wrong


def test_deleting_a_judge_in_the_admin_deletes_its_scores_as_the_researchers_page_does(client, admin_user, results):
    judge = results["judge"]
    response = results["metric_run"].dataset.contexts.first().responses.first()
    MetricScore.objects.create(response=response, metric=judge.metric_name, version="t", value=4.0)
    client.force_login(admin_user)
    url = reverse("admin:scoring_judge_delete", args=[judge.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Judge.objects.exists() and not MetricScore.objects.filter(metric=judge.metric_name).exists()
    assert MetricScore.objects.filter(metric="bleu1").exists()


def test_the_admin_index_names_every_model_in_proper_english(client, admin_user):
    # Django adds an "s" to a model's name unless told otherwise: "link identitys", "judge cache entrys".
    client.force_login(admin_user)
    page = client.get(reverse("admin:index")).content.decode()
    assert "Link identities" in page and "Judge cache entries" in page and "Prolific submissions" in page
    for app in ("annotation", "scoring", "analysis"):
        for model in apps.get_app_config(app).get_models():
            plural = str(model._meta.verbose_name_plural)
            assert not plural.endswith(("ys", "ss")) or plural.endswith(("eys", "ays", "oys")), f"{model}: {plural}"


def test_the_judge_page_in_the_admin_builds_its_url_field_without_djangos_scheme_deprecation(
    client, admin_user, results
):
    """The admin's form names the URL field's scheme, as the researcher's form does: Django 6 changes
    its default, and Django 5.2 warns on every form that leaves it unnamed."""
    from django.utils.deprecation import RemovedInDjango60Warning

    client.force_login(admin_user)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        page = client.get(reverse("admin:scoring_judge_change", args=[results["judge"].pk]))
    assert page.status_code == 200
    assert [str(w.message) for w in caught if issubclass(w.category, RemovedInDjango60Warning)] == []
