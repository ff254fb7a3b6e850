"""The quality pages: cached report only, owner isolation, overrides with a reason."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import services
from annotation.models import Annotator, ExclusionDecision
from annotation.quality.services import quality_recompute
from annotation.services.reviews import annotator_exclude
from tests.annotation.collected import build_collected_survey
from tests.annotation.studies_helpers import good_answers, make_survey
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture
def survey(researcher):
    return build_collected_survey(owner=researcher)


def _survey_url(survey):
    return reverse("annotation:quality_survey", args=[survey.pk])


def _annotator_url(survey, worker):
    return reverse("annotation:quality_annotator", args=[survey.pk, Annotator.objects.get(worker_id=worker).pk])


def test_the_page_queues_a_recompute_and_says_computing_when_there_is_no_report(
    researcher_client, survey, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = researcher_client.get(_survey_url(survey))
    assert response.status_code == 200
    assert "Computing…" in response.content.decode()
    assert len(callbacks) == 1  # the recompute, queued for after the request's transaction


def test_the_survey_page_renders_the_report_of_a_survey_collected_in_the_app(researcher_client, survey):
    report = quality_recompute(survey=survey).data
    response = researcher_client.get(_survey_url(survey))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Computing…" not in page
    assert f"{report['median_kappa']:.3f}" in page
    assert f"{report['alpha']:.3f}" in page
    assert "mean kappa -0.077 over 3 pairs, below 0.2" in page  # why careless is excluded, judged against ann, ben, cat
    # The colour follows the kappa the rule judged: careless is red there, and only there.
    assert '<td class="num kappa-bad" data-label="Judged kappa">-0.077</td>' in page
    assert '<td class="num" data-label="Mean kappa">-0.080</td>' in page
    assert "median 0.50 s per item, below 1.5 s" in page
    assert "failed 1 of 2 attention checks" in page
    assert page.count('<th scope="row">') == 6  # the pairwise matrix
    assert "<svg" in page and "Used pairs per kappa band" in page
    assert "Median 5.5 s per rated item" in page


def test_the_annotator_page_shows_checks_pairs_and_history(researcher_client, survey):
    quality_recompute(survey=survey)
    page = researcher_client.get(_annotator_url(survey, "inattentive")).content.decode()
    assert "Annotator inattentive" in page
    assert page.count("<td>passed</td>") == 1
    assert page.count('<td><span class="status-excluded">failed</span></td>') == 1
    assert "failed 1 of 2 attention checks" in page
    assert "Record decision" in page
    assert "<td>ann</td>" in page  # agreement with each other annotator


def test_an_override_from_the_page_is_recorded_with_its_reason(researcher_client, researcher, survey):
    quality_recompute(survey=survey)
    url = reverse("annotation:quality_override", args=[survey.pk, Annotator.objects.get(worker_id="careless").pk])
    response = researcher_client.post(url, {"action": "accept", "note": "known good annotator"})
    assert response.status_code == 302
    decision = ExclusionDecision.objects.filter(source="manual").get()
    assert (decision.excluded, decision.note, decision.decided_by) == (False, "known good annotator", researcher)
    assert researcher_client.post(url, {"action": "exclude", "note": ""}).status_code == 302
    assert ExclusionDecision.objects.filter(source="manual").count() == 1


@pytest.mark.shared_data
def test_the_page_renders_the_imported_usr_survey(researcher_client, researcher, shared_data):
    dataset_records, rating_records = usr_personachat(shared_data)
    dataset = load_dataset_records(records=dataset_records, name="usr", owner=researcher)
    survey = load_rating_records(records=rating_records, dataset=dataset, survey_name="usr", owner=researcher)
    report = quality_recompute(survey=survey).data
    page = researcher_client.get(_survey_url(survey)).content.decode()
    assert "shikib" in page and "yulan" in page
    assert f"{report['median_kappa']:.3f}" in page
    assert "No timings" in page and "No attention-check answers" in page
    assert researcher_client.get(_annotator_url(survey, "maxine")).status_code == 200


def test_other_researchers_and_anonymous_users_see_nothing(client, other_researcher, survey):
    quality_recompute(survey=survey)
    careless = Annotator.objects.get(worker_id="careless")
    urls = [
        _survey_url(survey),
        reverse("annotation:quality_annotator", args=[survey.pk, careless.pk]),
    ]
    for url in urls:
        assert client.get(url).status_code == 302  # to the login page
    client.force_login(other_researcher)
    for url in urls:
        assert client.get(url).status_code == 404
    override = reverse("annotation:quality_override", args=[survey.pk, careless.pk])
    assert client.post(override, {"action": "accept", "note": "mine now"}).status_code == 404
    assert not ExclusionDecision.objects.filter(source="manual").exists()
    index = client.get(reverse("annotation:quality_index")).content.decode()
    assert survey.name not in index


def test_an_annotator_of_another_survey_is_not_found(researcher_client, survey, researcher):
    other = build_collected_survey(owner=researcher, name="second")
    stranger = Annotator.objects.create(provider="local", worker_id="stranger")
    url = reverse("annotation:quality_annotator", args=[other.pk, stranger.pk])
    assert researcher_client.get(url).status_code == 404
    assert researcher_client.get(reverse("annotation:quality_index")).status_code == 200


@pytest.mark.parametrize("action", ["accept", "exclude", "reset"])
def test_an_override_for_an_annotator_who_did_no_work_in_the_survey_is_not_found_and_writes_nothing(
    researcher_client, survey, action
):
    quality_recompute(survey=survey)
    stranger = Annotator.objects.create(provider="local", worker_id="stranger")
    decisions = ExclusionDecision.objects.count()
    url = reverse("annotation:quality_override", args=[survey.pk, stranger.pk])
    response = researcher_client.post(url, {"action": action, "note": "not theirs"})
    assert response.status_code == 404
    assert (
        ExclusionDecision.objects.count() == decisions
        and not ExclusionDecision.objects.filter(annotator=stranger).exists()
    )


def test_staff_see_every_survey(client, admin_user, survey):
    quality_recompute(survey=survey)
    client.force_login(admin_user)
    assert client.get(_survey_url(survey)).status_code == 200


def test_a_survey_too_small_for_split_half_says_why_instead_of_zero_splits(researcher_client, researcher):
    records = [
        {"context_id": f"c{i}", "context": ["Hi"], "references": ["Hey"], "responses": [{"system": "a", "text": "yo"}]}
        for i in range(2)
    ]
    dataset = load_dataset_records(records=records, name="tiny", owner=researcher)
    ratings = [
        {"context_id": f"c{i}", "system": "a", "worker": worker, "score": 1 + i + (worker == "w2")}
        for i in range(2)
        for worker in ("w1", "w2")
    ]
    survey = load_rating_records(records=ratings, dataset=dataset, survey_name="tiny", owner=researcher)
    quality_recompute(survey=survey)
    page = researcher_client.get(_survey_url(survey)).content.decode()
    assert "0 random splits" not in page and "about 0 responses" not in page
    assert "Split-half: not computed: it needs at least three responses rated in both halves" in page
    assert "<summary>The one pair</summary>" in page and "All 1 pairs" not in page


def test_a_rating_surveys_counts_say_they_are_of_the_overall_question(researcher_client, researcher):
    # A survey with extra aspects stores a rating per aspect: its own page counts them all (240), the
    # quality rules judge the overall question only (120). Unlabelled, the two numbers looked like lost ratings.
    survey = make_survey(researcher, name="two-aspects", n_contexts=6, aspects=["topicality"])
    for worker in ("ann", "ben"):  # 2 HITs x 2 annotators
        for _ in range(2):
            claimed = services.assignment_claim(survey=survey, worker_id=worker)
            services.assignment_submit(assignment=claimed, answers=good_answers(claimed))
    report = quality_recompute(survey=survey).data
    overall = survey.ratings.filter(aspect="overall").count()
    assert report["n_ratings"] == overall and survey.ratings.count() == 2 * overall
    index = researcher_client.get(reverse("annotation:quality_index")).content.decode()
    assert f'data-label="Ratings or judgements">{overall} ratings (overall)</td>' in index
    page = researcher_client.get(_survey_url(survey)).content.decode()
    assert f"{overall} accepted, {report['n_responses']} responses, overall question" in page


def test_after_an_exclusion_the_quality_pages_say_a_recompute_is_queued_and_when(
    researcher_client, researcher, survey, settings, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a worker runs the recompute, after the debounce
    quality_recompute(survey=survey)
    ann = Annotator.objects.get(worker_id="ann")
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        annotator_exclude(survey=survey, annotator=ann, actor=researcher, reason="failed gold twice")
        index = researcher_client.get(reverse("annotation:quality_index")).content.decode()
        page = researcher_client.get(_survey_url(survey)).content.decode()
        annotator = researcher_client.get(_annotator_url(survey, "ann")).content.decode()
    assert len(callbacks) == 1  # one recompute, queued by the exclusion; the pages queued none
    # the minute of the exclusion (either side of a minute's turn while the test ran)
    queued_at = "({})".format("|".join({moment.strftime("%H:%M") for moment in (before, timezone.now())}))
    # Before: the index showed the old "Excluded" count and its computed time, with no word of the
    # change; the survey page said only "Computing…".
    row = re.search(rf'<tr>\s*<td class="name"><a href="{re.escape(_survey_url(survey))}">.*?</tr>', index, re.S)
    assert re.search(rf"recomputing after a change at {queued_at}:\d\d…", row.group(0))
    assert '<meta http-equiv="refresh" content="15">' in index
    for text in (page, annotator):
        assert re.search(rf"A recompute was queued at {queued_at}:\d\d UTC, after a change", text)
    assert "This page reloads itself every 15 s." in page and '<meta http-equiv="refresh"' in page
    # The annotator page holds the override form: it is not reloaded under the researcher's typing.
    assert "Reload the page in a moment." in annotator and '<meta http-equiv="refresh"' not in annotator


def test_the_quality_index_does_not_reload_itself_when_nothing_is_queued(researcher_client, survey):
    quality_recompute(survey=survey)
    index = researcher_client.get(reverse("annotation:quality_index")).content.decode()
    assert "recomputing" not in index and '<meta http-equiv="refresh"' not in index
