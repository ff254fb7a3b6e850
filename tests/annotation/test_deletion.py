"""Deleting a dataset or a survey from its page: the confirmation lists what goes, with counts; the
delete removes exactly that (every table's rows counted before and after, all models of every app);
it is refused while a paid study is live or a job uses the rows; only the owner may, by POST."""

import re

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Dataset, MTurkAssignment, MTurkHIT, ProlificStudy, ProlificSubmission, Response, Survey
from annotation.services.deletion import DeletionRefused, dataset_delete, deletion_plan, survey_delete
from scoring.models import AdemModel, MetricRun, MetricScore, TrainingRun
from tests.access.test_every_researcher_url import study_objects
from tests.annotation import mturk_helpers

pytestmark = pytest.mark.django_db


def row_counts():
    """Rows of every table Django knows (auto-created many-to-many tables included), by model label."""
    return {model._meta.label: model.objects.count() for model in apps.get_models(include_auto_created=True)}


def removed(before, after):
    return {label: before[label] - after[label] for label in before if before[label] != after[label]}


@pytest.fixture
def stubbed(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    mturk_helpers.install_stub(monkeypatch, settings)


@pytest.fixture
def worlds(researcher, other_researcher, stubbed, django_capture_on_commit_callbacks):
    alice = study_objects(researcher, "alice", django_capture_on_commit_callbacks)
    bob = study_objects(other_researcher, "bob", django_capture_on_commit_callbacks)
    # scoring's runs were queued without a worker: finished, so they hold nothing
    MetricRun.objects.update(status=MetricRun.Status.DONE)
    TrainingRun.objects.update(status=TrainingRun.Status.DONE)
    for world in (alice, bob):  # scores, as the run would have stored them
        responses = Response.objects.filter(context__dataset=world["dataset"])[:5]
        MetricScore.objects.bulk_create(
            MetricScore(response=r, metric="bleu1", version="1", value=0.5) for r in responses
        )
    return alice, bob


def confirm_counts(html):
    """{label: count} from the confirmation page's table."""
    cells = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)</td></tr>", html)
    return {label: int(count) for label, count in cells}


def test_deleting_a_dataset_removes_exactly_what_its_page_listed_and_nothing_of_anyone_else(researcher_client, worlds):
    alice, bob = worlds
    dataset = alice["dataset"]
    page = researcher_client.get(reverse("annotation:dataset_detail", args=[dataset.pk]))
    confirm_url = reverse("annotation:dataset_delete", args=[dataset.pk])
    assert confirm_url in page.content.decode()  # reachable by clicking from the dataset's page
    plan = deletion_plan(target=dataset)
    assert not plan.refusals
    confirm = researcher_client.get(confirm_url)
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "confirm-delete" in html
    assert "Kept, but no longer linked to it: 1 ADEM model" in html  # trained on it: kept, unlinked
    shown = confirm_counts(html)
    # the page names ratings, HITs, metric scores, runs and reports, with the counts deleted below
    for word in ("rating", "metric score", "report", "metric run", "survey", "response"):
        assert any(word in label.lower() for label in shown), (word, sorted(shown.items()))
    before = row_counts()
    response = researcher_client.post(confirm_url)
    assert response.status_code == 302 and response["Location"] == reverse("annotation:dataset_list")
    after = row_counts()
    gone = removed(before, after)
    assert gone == plan.by_model
    assert sum(shown.values()) == sum(gone.values())
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    # bob's world is whole; alice's ADEM model is kept, no longer naming the dataset
    assert Dataset.objects.filter(pk=bob["dataset"].pk).exists()
    assert Survey.objects.filter(owner=bob["survey"].owner).count() == 5
    assert AdemModel.objects.get(pk=alice["adem"].pk).dataset is None


def test_deleting_a_survey_removes_its_answers_and_reports_and_keeps_its_dataset(researcher_client, worlds):
    alice, _bob = worlds
    survey = alice["survey"]
    page = researcher_client.get(reverse("annotation:survey_detail", args=[survey.pk]))
    confirm_url = reverse("annotation:survey_delete", args=[survey.pk])
    assert confirm_url in page.content.decode()
    plan = deletion_plan(target=survey)
    html = researcher_client.get(confirm_url).content.decode()
    assert "ratings" in html.lower() and "HITs" in html
    n_ratings = survey.ratings.count()
    assert plan.by_model["annotation.Rating"] == n_ratings > 0
    before = row_counts()
    response = researcher_client.post(confirm_url)
    assert response.status_code == 302 and response["Location"] == reverse("annotation:survey_list")
    gone = removed(before, row_counts())
    assert gone == plan.by_model
    assert "annotation.Dataset" not in gone and "annotation.Response" not in gone
    assert "annotation.Annotator" not in gone  # annotators' accounts are kept
    assert Dataset.objects.filter(pk=alice["dataset"].pk).exists()


def test_another_researcher_and_staff_get_a_404_and_a_get_never_deletes(worlds, other_researcher, admin_user):
    alice, _ = worlds
    urls = [
        reverse("annotation:dataset_delete", args=[alice["dataset"].pk]),
        reverse("annotation:survey_delete", args=[alice["survey"].pk]),
    ]
    clients = []
    for user in (other_researcher, admin_user):
        clients.append(Client())
        clients[-1].force_login(user)
    before = row_counts()  # after the logins, whose sessions are rows too
    for client in clients:
        for url in urls:
            assert client.get(url).status_code == 404
            assert client.post(url).status_code == 404
    assert row_counts() == before


def test_a_get_only_asks_and_a_post_without_the_csrf_token_is_refused(worlds, researcher, researcher_client):
    alice, _ = worlds
    url = reverse("annotation:survey_delete", args=[alice["survey"].pk])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(researcher)
    researcher_client.get("/")
    before = row_counts()
    assert researcher_client.get(url).status_code == 200
    assert strict.post(url).status_code == 403
    assert row_counts() == before


def test_a_published_prolific_study_holds_its_survey_and_dataset_and_the_page_says_why(researcher_client, worlds):
    alice, _ = worlds
    prolific = alice["prolific"]
    ProlificStudy.objects.filter(survey=prolific).update(study_id="s123", status="ACTIVE")
    url = reverse("annotation:survey_delete", args=[prolific.pk])
    html = researcher_client.get(url).content.decode()
    assert "delete-refused" in html and "s123" in html and "confirm-delete" not in html
    before = row_counts()
    response = researcher_client.post(url)
    assert response.status_code == 409 and "s123" in response.content.decode()
    with pytest.raises(DeletionRefused, match="Prolific study s123 is active"):
        dataset_delete(dataset=prolific.dataset)
    assert row_counts() == before
    # stopped, but a submission still awaits review: still refused
    study = ProlificStudy.objects.get(survey=prolific)
    ProlificStudy.objects.filter(pk=study.pk).update(status="COMPLETED")
    annotator = alice["annotator"]
    ProlificSubmission.objects.create(study=study, annotator=annotator, session_id="sess1", status="AWAITING REVIEW")
    with pytest.raises(DeletionRefused, match="awaiting your review"):
        survey_delete(survey=prolific)
    ProlificSubmission.objects.filter(study=study).update(status="APPROVED")
    survey_delete(survey=prolific)
    assert not Survey.objects.filter(pk=prolific.pk).exists()


def test_a_live_mturk_hit_holds_its_survey_but_a_sandbox_or_expired_one_does_not(worlds):
    alice, _ = worlds
    turk = alice["turk"]
    hit = turk.hits.first()
    mturk_hit = MTurkHIT.objects.create(
        hit=hit, mturk_id="H1", hit_type_id="T", request_token="r", sandbox=False, status="Assignable"
    )
    with pytest.raises(DeletionRefused, match="can still accept"):
        survey_delete(survey=turk)
    MTurkHIT.objects.filter(pk=mturk_hit.pk).update(expires_at=timezone.now())
    MTurkAssignment.objects.create(mturk_id="A1", mturk_hit=mturk_hit, worker_id="W1", status="Submitted")
    with pytest.raises(DeletionRefused, match="not yet approved or rejected"):
        survey_delete(survey=turk)
    MTurkHIT.objects.filter(pk=mturk_hit.pk).update(sandbox=True)  # the sandbox pays nobody
    survey_delete(survey=turk)
    assert not Survey.objects.filter(pk=turk.pk).exists()


def test_a_running_metrics_run_holds_the_dataset(worlds, researcher_client):
    alice, _ = worlds
    dataset = alice["dataset"]
    run = MetricRun.objects.filter(dataset=dataset).first()
    MetricRun.objects.filter(pk=run.pk).update(status=MetricRun.Status.RUNNING)
    html = researcher_client.get(reverse("annotation:dataset_delete", args=[dataset.pk])).content.decode()
    assert f"Metrics run {run.pk}" in html
    with pytest.raises(DeletionRefused, match=f"Metrics run {run.pk}"):
        dataset_delete(dataset=dataset)
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_a_dataset_under_another_researchers_survey_is_not_deleted(worlds, other_researcher):
    alice, bob = worlds
    Survey.objects.filter(pk=bob["survey"].pk).update(dataset=alice["dataset"])
    plan = deletion_plan(target=alice["dataset"])
    assert any("another researcher" in reason for reason in plan.refusals)
    with pytest.raises(DeletionRefused):
        dataset_delete(dataset=alice["dataset"])
