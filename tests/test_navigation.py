"""The researcher's way through the app: top bar, pipeline bar, index pages, empty states,
confirmed destructive actions, reopening, the override form, readable scores, the 404 page."""

import re
from datetime import timedelta

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone

import scoring.metrics as engine
from analysis.models import Report
from annotation import services
from annotation.models import Response, Survey
from annotation.models.ratings import HITItem
from scoring.models import AdemModel, MetricRun, MetricScore
from tests.annotation.studies_helpers import dataset_records, good_answers, make_survey
from tests.factories import load_dataset_records

pytestmark = pytest.mark.django_db


def _page(client, url):
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def _pipeline(page):
    """The pipeline bar's steps as {label: (state, href)}."""
    bar = re.search(r'<nav class="pipeline".*?</nav>', page, re.S)
    assert bar, "no pipeline bar on the page"
    steps = re.findall(
        r'<a href="([^"]+)"[^>]*><span class="step-label">([^<]+)</span> <span class="step-state">([^<]+)',
        bar.group(0),
    )
    return {label: (state, href) for href, label, state in steps}


def _current_versions():
    return {metric.name: metric.version for metric in engine.all_metrics()}


@pytest.fixture
def dataset(researcher):
    return load_dataset_records(records=dataset_records(6), name="nav-study", owner=researcher)


# --- top bar and index pages ----------------------------------------------------------------------


def test_top_bar_lists_the_researchers_places_and_marks_the_current_one(researcher_client):
    page = _page(researcher_client, reverse("scoring:metrics_index"))
    nav = re.search(r'<nav aria-label="Main">.*?</nav>', page, re.S).group(0)
    labels = re.findall(r">(Datasets|Surveys|Quality|Metrics|ADEM|Reports)</a>", nav)
    assert labels == ["Datasets", "Surveys", "Quality", "Metrics", "ADEM", "Reports"]
    assert re.findall(r'aria-current="page">(\w+)</a>', nav) == ["Metrics"]
    assert reverse("scoring:adem_models") in nav and reverse("analysis:reports_index") in nav
    reports = _page(researcher_client, reverse("analysis:reports_index"))
    assert re.findall(r'aria-current="page">(\w+)</a>', reports) == ["Reports"]


def test_metrics_index_lists_own_datasets_with_their_metric_state_and_link(
    researcher_client, dataset, other_researcher
):
    load_dataset_records(records=dataset_records(2), name="bobs-study", owner=other_researcher)
    MetricRun.objects.create(
        dataset=dataset, metrics=list(_current_versions()), versions=_current_versions(), status="done"
    )
    page = _page(researcher_client, reverse("scoring:metrics_index"))
    assert f"{len(_current_versions())} metrics, up to date" in page
    assert reverse("scoring:dataset_metrics", args=[dataset.pk]) in page
    assert "bobs-study" not in page


def _report_computed_two_minutes_ago(dataset, survey=None):
    Report.objects.create(
        dataset=dataset,
        survey=survey,
        params={},
        params_hash="h",
        status="ready",
        data={},
        computed_at=timezone.now() - timedelta(minutes=2),
    )


def test_reports_index_lists_datasets_and_launched_surveys_with_report_state(researcher_client, researcher):
    survey = make_survey(researcher, name="launched")
    draft = make_survey(researcher, name="drafted", launch=False)
    _report_computed_two_minutes_ago(survey.dataset, survey)
    page = _page(researcher_client, reverse("analysis:reports_index"))
    assert reverse("analysis:dataset_report", args=[survey.dataset.pk]) in page
    assert reverse("analysis:survey_report", args=[survey.pk]) in page
    assert "computed 2\xa0minutes ago" in page
    assert "not computed yet" in page  # the dataset-wide report
    assert reverse("analysis:survey_report", args=[draft.pk]) not in page


# --- the pipeline bar -----------------------------------------------------------------------------


def test_pipeline_bar_of_a_new_dataset_points_to_creating_a_survey(researcher_client, dataset):
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[dataset.pk])))
    assert list(steps) == ["Upload", "Surveys", "Quality", "Metrics", "ADEM/judges", "Report"]
    assert steps["Upload"][0] == "6 contexts, 4 systems"
    assert steps["Surveys"] == ("no surveys yet: create one", f"/surveys/new/?dataset={dataset.pk}")
    assert steps["Metrics"][0] == "not computed yet"
    assert steps["ADEM/judges"][0] == "no model yet"
    assert steps["Report"][0] == "report not computed yet"


def test_pipeline_bar_of_a_dataset_with_only_draft_surveys_points_to_launching_one(researcher_client, researcher):
    draft = make_survey(researcher, name="drafted", launch=False)
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[draft.dataset.pk])))
    draft_url = reverse("annotation:survey_detail", args=[draft.pk])
    assert steps["Surveys"] == ("1 draft, none launched: launch one", draft_url)
    page = _page(researcher_client, reverse("annotation:survey_detail", args=[draft.pk]))
    next_step = re.search(r'<li class="step step-next"><a href="([^"]+)"[^>]*><span class="step-label">(\w+)', page)
    assert next_step.groups() == (draft_url, "Surveys")


def test_pipeline_bar_states_follow_the_work_done(researcher_client, researcher, other_researcher):
    live = make_survey(researcher, name="live-one")
    dataset = live.dataset
    services.survey_create(dataset=dataset, name="second", owner=researcher)
    services.survey_create(dataset=dataset, name="third", owner=researcher)
    computed = {**_current_versions(), "adem:mine": ""}  # the model's scores too (its checkpoint hash is blank)
    MetricRun.objects.create(dataset=dataset, metrics=list(computed), versions=computed, status="done")
    AdemModel.objects.create(name="mine", owner=researcher, dataset=dataset, status="ready")
    AdemModel.objects.create(name="bobs", owner=other_researcher, dataset=dataset, status="ready")
    _report_computed_two_minutes_ago(dataset)
    steps = _pipeline(_page(researcher_client, reverse("annotation:dataset_detail", args=[dataset.pk])))
    assert steps["Surveys"][0] == "3 surveys, 1 live"
    assert steps["Metrics"] == (
        f"{len(computed)} metrics, up to date",
        reverse("scoring:dataset_metrics", args=[dataset.pk]),
    )
    assert steps["ADEM/judges"] == ("1 model ready", reverse("scoring:adem_models") + f"?dataset={dataset.pk}")
    assert steps["Report"] == (
        "report computed 2\xa0minutes ago",
        reverse("analysis:dataset_report", args=[dataset.pk]),
    )


def test_pipeline_bar_reports_a_survey_report_when_the_dataset_wide_one_is_not_computed(researcher_client, researcher):
    survey = make_survey(researcher, name="read-by-survey")
    url = reverse("analysis:survey_report", args=[survey.pk])
    assert _pipeline(_page(researcher_client, url))["Report"][0] == "report not computed yet"
    _report_computed_two_minutes_ago(survey.dataset, survey)
    assert _pipeline(_page(researcher_client, url))["Report"] == (
        "survey report computed 2\xa0minutes ago",
        reverse("analysis:dataset_report", args=[survey.dataset.pk]),
    )


def test_pipeline_bar_says_when_metrics_are_out_of_date_or_computing(researcher_client, dataset):
    old = {**_current_versions(), "bleu4": "an-old-version"}
    MetricRun.objects.create(dataset=dataset, metrics=list(old), versions=old, status="done")
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    assert _pipeline(_page(researcher_client, url))["Metrics"][0].endswith("metrics, 1 out of date")
    MetricRun.objects.create(
        dataset=dataset, metrics=["bleu4"], versions={}, status="running", total_chunks=4, done_chunks=1
    )
    assert _pipeline(_page(researcher_client, url))["Metrics"][0] == "computing, 25% done"


def test_pipeline_bar_counts_a_trained_adem_model_until_its_scores_are_computed(
    researcher_client, researcher, other_researcher, dataset
):
    # Compute metrics with none ticked scores the owner's ready ADEM models too, and the report reads
    # them as adem:NAME: a model trained after the last run is a metric not computed yet, not "up to date".
    MetricRun.objects.create(
        dataset=dataset, metrics=list(_current_versions()), versions=_current_versions(), status="done"
    )
    engine_count = len(_current_versions())
    url = reverse("annotation:dataset_detail", args=[dataset.pk])
    AdemModel.objects.create(name="bobs", owner=other_researcher, dataset=dataset, status="ready")
    AdemModel.objects.create(name="unready", owner=researcher, dataset=dataset, status="running")
    assert _pipeline(_page(researcher_client, url))["Metrics"][0] == f"{engine_count} metrics, up to date"
    AdemModel.objects.create(name="mine", owner=researcher, dataset=dataset, status="ready", checkpoint_sha256="a" * 64)
    assert _pipeline(_page(researcher_client, url))["Metrics"][0] == f"{engine_count} metrics, 1 not computed"
    index = _page(researcher_client, reverse("scoring:metrics_index"))
    assert f"{engine_count} metrics, 1 not computed" in index
    with_adem = {**_current_versions(), "adem:mine": "a" * 12}
    MetricRun.objects.create(dataset=dataset, metrics=list(with_adem), versions=with_adem, status="done")
    assert _pipeline(_page(researcher_client, url))["Metrics"][0] == f"{engine_count + 1} metrics, up to date"
    AdemModel.objects.filter(name="mine").update(checkpoint_sha256="b" * 64)  # retrained under its name
    assert _pipeline(_page(researcher_client, url))["Metrics"][0] == f"{engine_count + 1} metrics, 1 out of date"


def test_pipeline_bar_is_on_the_survey_quality_metrics_and_report_pages_with_the_current_step(
    researcher_client, researcher
):
    survey = make_survey(researcher, name="everywhere")
    pages = {
        "Surveys": reverse("annotation:survey_detail", args=[survey.pk]),
        "Quality": reverse("annotation:quality_survey", args=[survey.pk]),
        "Metrics": reverse("scoring:dataset_metrics", args=[survey.dataset.pk]),
        "Report": reverse("analysis:dataset_report", args=[survey.dataset.pk]),
    }
    for label, url in pages.items():
        page = _page(researcher_client, url)
        _pipeline(page)
        current = re.search(r'aria-current="page"><span class="step-label">(\w+)', page)
        assert current and current.group(1) == label, url


# --- empty states -------------------------------------------------------------------------------


def test_empty_pages_offer_the_next_action(client, outsider):
    client.force_login(outsider)
    upload = reverse("annotation:dataset_upload")
    create = reverse("annotation:survey_new")
    for url, text, target in [
        (reverse("annotation:dataset_list"), "No datasets yet", upload),
        (reverse("annotation:survey_list"), "No surveys yet", create),
        (reverse("annotation:quality_index"), "No surveys yet", create),
        (reverse("scoring:metrics_index"), "No datasets yet", upload),
        (reverse("analysis:reports_index"), "No datasets yet", upload),
    ]:
        page = _page(client, url)
        empty = re.search(r'<p class="empty">(.*?)</p>', page, re.S)
        assert empty and text in empty.group(1) and f'href="{target}"' in empty.group(1), url


def test_dataset_without_surveys_offers_create_survey_for_that_dataset(researcher_client, dataset):
    page = _page(researcher_client, reverse("annotation:dataset_detail", args=[dataset.pk]))
    empty = re.search(r'<p class="empty">(.*?)</p>', page, re.S).group(1)
    assert "No surveys yet" in empty and f"/surveys/new/?dataset={dataset.pk}" in empty and "Create survey" in empty


def test_survey_names_on_the_dataset_page_link_to_their_pages(researcher_client, researcher):
    survey = make_survey(researcher, name="linked")
    page = _page(researcher_client, reverse("annotation:dataset_detail", args=[survey.dataset.pk]))
    assert f'<a href="/surveys/{survey.pk}/">linked</a>' in page


def test_survey_list_shows_progress(researcher_client, researcher):
    survey = make_survey(researcher, name="progressing", n_contexts=6)  # 2 HITs x 2 annotators
    page = _page(researcher_client, reverse("annotation:survey_list"))
    assert '<th scope="col">Progress</th>' in page
    assert "0 of 4 assignments (0%)" in page
    assert survey.hits.count() == 2


def test_preview_has_the_top_bar_and_a_way_back(researcher_client, researcher):
    survey = make_survey(researcher, name="previewed", launch=False)
    page = _page(researcher_client, reverse("annotation:survey_preview", args=[survey.pk]))
    assert '<nav aria-label="Main">' in page
    assert 'id="preview-back">previewed</a>' in page and f'href="/surveys/{survey.pk}/"' in page


# --- destructive actions --------------------------------------------------------------------------


def test_close_is_confirmed_first_a_get_or_a_first_post_does_not_close(researcher_client, researcher):
    survey = make_survey(researcher, name="to-close")
    url = reverse("annotation:survey_action", args=[survey.pk, "close"])
    detail = _page(researcher_client, reverse("annotation:survey_detail", args=[survey.pk]))
    assert re.search(rf'<a class="button danger" id="close" href="{url}">', detail)
    page = _page(researcher_client, url)
    assert "Close survey to-close?" in page and 'name="confirm" value="yes"' in page
    assert researcher_client.post(url).status_code == 200  # the confirmation page again
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE
    response = researcher_client.post(url, {"confirm": "yes"})
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.status == Survey.Status.CLOSED and survey.closed_at is not None


def test_confirm_page_of_someone_elses_survey_is_a_404(client, researcher, other_researcher):
    survey = make_survey(researcher, name="alices")
    client.force_login(other_researcher)
    assert client.get(reverse("annotation:survey_action", args=[survey.pk, "close"])).status_code == 404
    assert (
        client.post(reverse("annotation:survey_action", args=[survey.pk, "close"]), {"confirm": "yes"}).status_code
        == 404
    )
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE


def test_a_closed_local_survey_reopens_paused_and_can_be_launched_again(researcher_client, researcher):
    survey = make_survey(researcher, name="reopened")
    services.survey_close(survey=survey)
    detail = _page(researcher_client, reverse("annotation:survey_detail", args=[survey.pk]))
    assert 'id="reopen"' in detail
    researcher_client.post(reverse("annotation:survey_action", args=[survey.pk, "reopen"]))
    survey.refresh_from_db()
    assert survey.status == Survey.Status.PAUSED and survey.closed_at is None
    researcher_client.post(reverse("annotation:survey_action", args=[survey.pk, "launch"]))
    survey.refresh_from_db()
    assert survey.status == Survey.Status.LIVE


def test_a_closed_mturk_survey_does_not_reopen_and_says_why(researcher_client, researcher):
    survey = make_survey(researcher, name="on-mturk", launch=False, provider="mturk")
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.CLOSED)
    detail = _page(researcher_client, reverse("annotation:survey_detail", args=[survey.pk]))
    assert 'id="reopen"' not in detail and "cannot be offered again" in detail
    response = researcher_client.post(reverse("annotation:survey_action", args=[survey.pk, "reopen"]), follow=True)
    assert "cannot be offered again" in response.content.decode()
    survey.refresh_from_db()
    assert survey.status == Survey.Status.CLOSED


def test_override_form_has_no_preselected_decision_and_requires_one(researcher_client, researcher):
    survey = make_survey(researcher, name="overridden")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    url = reverse("annotation:quality_annotator", args=[survey.pk, assignment.annotator_id])
    page = _page(researcher_client, url)
    radios = re.findall(r'<input type="radio" name="action"[^>]*>', page)
    assert len(radios) == 3
    assert not any("checked" in radio for radio in radios)
    assert all("required" in radio for radio in radios)
    # The two annotator pages link to each other.
    assert reverse("annotation:survey_annotator", args=[survey.pk, assignment.annotator_id]) in page
    other = _page(researcher_client, reverse("annotation:survey_annotator", args=[survey.pk, assignment.annotator_id]))
    assert url in other


# --- the dataset page once metrics exist ----------------------------------------------------------


def test_dataset_page_shows_rounded_chosen_scores_and_no_dict(researcher_client, dataset):
    response = Response.objects.filter(context__dataset=dataset).order_by("pk").first()
    values = {"bleu4": 0.123456789, "meteor": 8.06e-17, "rouge_l": 0.5, "cider": 1.23456, "adem:demo-adem": 2.5400264}
    MetricScore.objects.bulk_create(
        MetricScore(response=response, metric=name, version="v", value=value) for name, value in values.items()
    )
    page = _page(researcher_client, reverse("annotation:dataset_detail", args=[dataset.pk]))
    chosen = re.search(r'<ul class="scores">(.*?)</ul>', page, re.S).group(1)
    labels = re.findall(r'<span class="label">([^<]+)</span>([^<]+)</li>', chosen)
    assert labels == [("BLEU-4", "0.123"), ("METEOR", "0.000"), ("ROUGE-L", "0.500"), ("ADEM demo-adem", "2.540")]
    # every score one click away, on the context's own page (issue 35, F28)
    scores_url = reverse("annotation:context_scores", args=[dataset.pk, response.context_id])
    assert f'href="{scores_url}">All 5 scores</a>' in page
    scores = _page(researcher_client, scores_url)
    assert re.search(r'<th scope="row">CIDEr</th>(<td class="num">[^<]*</td>)*<td class="num">1.235</td>', scores)
    for text in (page, scores):
        assert "{'" not in text and "e-17" not in text and "2.5400264" not in text


def test_ratings_upload_shows_the_real_default_survey_name(researcher_client, dataset):
    page = _page(researcher_client, reverse("annotation:ratings_upload", args=[dataset.pk]))
    assert "(default: nav-study-imported)" in page and 'placeholder="nav-study-imported"' in page


# --- survey form wording and estimate -------------------------------------------------------------


def test_survey_form_for_a_known_dataset_offers_its_systems_as_checkboxes(researcher_client, dataset):
    page = _page(researcher_client, reverse("annotation:survey_new") + f"?dataset={dataset.pk}")
    boxes = re.findall(r'<input type="checkbox" name="systems" value="([^"]+)"', page)
    assert boxes == ["de", "hred", "human", "tfidf"]
    for label in ("Contexts per HIT", "Annotators per HIT", "Attention checks per HIT", "Max HITs per annotator"):
        assert f">{label}</label>" in page


def test_survey_form_creates_a_survey_of_the_ticked_systems(researcher_client, dataset):
    form = {
        "dataset": dataset.pk,
        "name": "ticked",
        "task_type": "rate",
        "systems": ["hred", "human"],
        "instructions": "Rate.",
        "contexts_per_hit": 3,
        "assignments_per_hit": 2,
        "attention_checks_per_hit": 1,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 60,
        "reward_cents": 40,
        "attention_policy": "flag",
    }
    researcher_client.post(reverse("annotation:survey_new"), form)
    survey = Survey.objects.get(name="ticked")
    assert sorted(survey.systems.values_list("name", flat=True)) == ["hred", "human"]


def test_estimate_counts_the_items_of_the_first_hit_overlap_contexts_included(researcher):
    survey = make_survey(researcher, name="overlapping", n_contexts=12, overlap_contexts=2, launch=False)
    estimate = services.survey_estimate_for(survey=survey)
    first = survey.hits.order_by("position").first()
    # Three contexts, the two overlap contexts and the instructed check's block, four replies each.
    assert estimate["items_per_hit"] == HITItem.objects.filter(hit=first).count() == (3 + 2 + 1) * 4


def test_settings_line_says_1_attention_check_not_checks(researcher_client, researcher):
    survey = make_survey(researcher, name="singular", attention_checks_per_hit=1, assignments_per_hit=1)
    page = _page(researcher_client, reverse("annotation:survey_detail", args=[survey.pk]))
    assert "1 attention check per HIT" in page and "1 annotator per HIT" in page


# --- not found --------------------------------------------------------------------------------------


def test_a_bad_annotator_link_gets_the_friendly_page_in_production_mode(client, settings):
    settings.DEBUG = False
    response = client.get("/s/not-a-real-token/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "<h1>No such study.</h1>" in page and '<nav aria-label="Main">' not in page
    researcher_page = client.get("/datasets/999999/")  # a researcher page: login first
    assert researcher_page.status_code == 302


def test_a_missing_researcher_page_says_page_not_found_with_ways_on(researcher_client, settings):
    settings.DEBUG = False
    response = researcher_client.get("/datasets/999999/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "Page not found" in page and '<nav aria-label="Main">' in page and "No such study" not in page


def test_reject_asks_first_and_only_the_confirmed_post_rejects(researcher_client, researcher):
    survey = make_survey(researcher, name="rejecting")
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    url = reverse("annotation:survey_review", args=[survey.pk, assignment.annotator_id])
    fields = {"action": "reject", "assignment": assignment.pk, "reason": "too fast"}
    first = researcher_client.post(url, fields)
    assert first.status_code == 200 and 'id="confirm-reject"' in first.content.decode()
    # HITs are numbered from 1 for people (position 0 is "HIT 1").
    assert f"Reject HIT {assignment.hit.position + 1} of w1?" in first.content.decode()
    assignment.refresh_from_db()
    assert assignment.status == "submitted"
    researcher_client.post(url, {**fields, "confirm": "yes"})
    assignment.refresh_from_db()
    assert assignment.status == "rejected"


def test_survey_form_says_the_written_replies_system_is_for_writing_tasks_only(researcher_client, dataset):
    html = researcher_client.get(reverse("annotation:survey_new")).content.decode()
    assert "System for written replies (writing tasks only)" in html and "Write system name" not in html
    assert 'data-task-type="write"' in html and html.count('data-task-type="pairwise"') == 9


def test_survey_form_without_a_dataset_leads_to_uploading_one_instead_of_an_empty_choice(
    researcher_client, other_researcher
):
    load_dataset_records(records=dataset_records(2), name="not-yours", owner=other_researcher)
    html = researcher_client.get(reverse("annotation:survey_new")).content.decode()
    assert 'id="no-dataset"' in html and reverse("annotation:dataset_upload") in html
    assert 'id="id_dataset"' not in html and "Create survey" not in html


def test_favicon_ico_leads_to_the_apps_icon(client):
    # The admin's pages name no icon, so browsers ask for /favicon.ico: it was a 404 (a console
    # error on every admin page).
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == static("img/favicon.svg")
    assert finders.find("img/favicon.svg"), "the icon the pages name is a static file"


def test_estimate_warns_when_a_hit_takes_longer_than_an_annotator_holds_it(researcher_client, dataset):
    # Every pair of 4 systems on 5 contexts is 31 questions, about 8 minutes: more than 5 allowed.
    form = {
        "dataset": dataset.pk,
        "name": "too-long",
        "task_type": "pairwise",
        "instructions": "Compare.",
        "contexts_per_hit": 5,
        "assignments_per_hit": 2,
        "attention_checks_per_hit": 1,
        "overlap_contexts": 0,
        "max_hits_per_annotator": 10,
        "assignment_minutes": 5,
        "reward_cents": 40,
        "attention_policy": "flag",
        "reference_pairs": "none",
        "estimate": "1",
    }
    page = researcher_client.post(reverse("annotation:survey_new"), form).content.decode()
    assert 'id="estimate-over-time"' in page
    assert "but an annotator holds it for 5 min" in page
    form["assignment_minutes"] = 60
    page = researcher_client.post(reverse("annotation:survey_new"), form).content.decode()
    assert 'id="estimate-over-time"' not in page


def test_survey_page_estimate_warns_of_a_hit_longer_than_its_assignment(researcher):
    survey = make_survey(researcher, name="held-briefly", n_contexts=12, launch=False)
    estimate = services.survey_estimate_for(survey=survey)
    assert estimate["assignment_minutes"] == survey.assignment_minutes
    survey.assignment_minutes = 1
    survey.save(update_fields=["assignment_minutes"])
    estimate = services.survey_estimate_for(survey=survey)
    assert estimate["over_time"] is (estimate["minutes_per_hit"] > 1) is True
