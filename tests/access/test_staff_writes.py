"""Reading every study is a staff right; changing one needs ownership, a superuser or a permission.

The staff user here has `is_staff` and no permission: every write endpoint of alice's study answers
404 (the same answer another researcher gets, so writes never tell staff more than reads do) and
no table changes, while the pages still read. A superuser and a holder of
`annotation.manage_any_study` may write. The URL patterns are enumerated, so a new endpoint that
accepts a POST must be classified below before this test passes.
"""

import itertools

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse

from annotation import selectors, services
from annotation.models import Annotator, ChatSystem, ReviewAction, Survey
from annotation.models.mturk import MTurkSettings
from annotation.models.quality import ExclusionDecision
from annotation.services import mturk as mturk_services
from scoring.forms.adem import ExperimentForm, TrainForm
from scoring.models import Judge, MetricRun, TrainingRun
from scoring.services.metrics.compute import metrics_compute
from tests.access.db_fingerprint import fingerprint
from tests.annotation import mturk_helpers
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

NAMESPACES = ("annotation", "scoring", "analysis")

# Pages of annotators and the scoring API: the link, the assignment token or a Bearer token is the
# credential there, not a researcher's login; their own tests cover them. Every pattern that takes a
# `token` is such a page and is left out too.
NOT_RESEARCHER_PAGES = {
    "annotation:task_entry",
    "annotation:task_assignment",
    "annotation:task_done",
    "annotation:mturk_task",
    "scoring:adem_score",
    "annotation:prolific_webhook",  # Prolific's signed deliveries: no session, 403 without a valid signature
}
# Forms that create the poster's own objects. Another's dataset is not among their choices (tested
# below with the forms themselves), so a staff POST naming it is a form error, not a 404.
OWN_ACCOUNT_FORMS = {
    "annotation:survey_new",
    "annotation:dataset_upload",
    "scoring:adem_train",
    "scoring:learned_train",  # a learned evaluator: the caller's own datasets only, as adem_train
    "scoring:adem_experiments",
    "scoring:adem_pretrain",
    "scoring:api_tokens",  # the caller's own API tokens: a POST creates one for the caller
    "scoring:judges",  # the caller's own LLM judges: a POST adds one for the caller
    "annotation:chat_system_add",  # the caller's own chat systems: a POST adds one for the caller
}
# Read-only views that answer any method like a GET: a POST changes nothing there.
READS_IGNORING_THE_METHOD = {
    "annotation:dataset_list",
    "annotation:dataset_detail",
    "annotation:dataset_download",
    "annotation:survey_list",
    "annotation:survey_detail",
    "annotation:survey_progress_json",
    "annotation:survey_preview",
    "annotation:survey_export",
    "annotation:survey_export_csv",
    "annotation:survey_annotator",
    "annotation:mturk_survey",
    "annotation:quality_index",
    "annotation:quality_survey",
    "annotation:quality_annotator",
    "scoring:adem_models",
    "scoring:adem_model",
    "scoring:adem_run",
    "scoring:adem_run_progress",
    "scoring:adem_run_curve",
}


@pytest.fixture
def study(researcher, monkeypatch, settings):
    """alice's study: a live local survey with one finished annotator, and an MTurk survey."""
    mturk_helpers.install_stub(monkeypatch, settings)
    survey = make_survey(researcher, name="alice-study")
    assignment = services.assignment_claim(survey=survey, worker_id="worker-1")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    turk = mturk_helpers.make_survey(researcher, n_hits=1, name="alice-turk")
    mturk_services.mturk_settings_ensure(survey=turk)  # the page makes the default row on first sight
    return {
        "dataset": survey.dataset,
        "survey": survey,
        "turk": turk,
        "annotator": Annotator.objects.get(worker_id="worker-1"),
        "metric_run": metrics_compute(dataset=survey.dataset, metrics=["bleu1"], user=researcher, dispatch=False),
        "judge": Judge.objects.create(
            owner=researcher, name="alice-judge", base_url="http://127.0.0.1:9/v1", model="m"
        ),
        "chat_system": ChatSystem.objects.create(
            owner=researcher, name="alice-chat", base_url="http://127.0.0.1:9/v1", model="m"
        ),
        "training_run": TrainingRun.objects.create(
            kind=TrainingRun.Kind.EXPERIMENT, owner=researcher, dataset=survey.dataset
        ),
    }


def ratings_file():
    line = b'{"context_id": "c000", "system": "hred", "worker": "w9", "score": 2}\n'
    return SimpleUploadedFile("ratings.jsonl", line, content_type="application/jsonl")


def write_requests(study):
    """(url name, url, POST data) of every write on an existing study, with data that would succeed."""
    survey, turk, dataset, annotator = study["survey"], study["turk"], study["dataset"], study["annotator"]
    mturk_url = reverse("annotation:mturk_action", args=[turk.pk])
    yield "annotation:survey_action", reverse("annotation:survey_action", args=[survey.pk, "close"]), {"confirm": "yes"}
    for action in ("pause", "launch"):
        yield "annotation:survey_action", reverse("annotation:survey_action", args=[survey.pk, action]), {}
    extend = reverse("annotation:survey_extend", args=[survey.pk])
    yield "annotation:survey_extend", extend, {"per_hit": 1, "from_assignments": survey.assignments_per_hit}
    review = reverse("annotation:survey_review", args=[survey.pk, annotator.pk])
    yield "annotation:survey_review", review, {"action": "exclude", "reason": "staff says so"}
    written = reverse("annotation:survey_written", args=[survey.pk])
    yield "annotation:survey_written", written, {"written": "1", "action": "accept"}
    upload = reverse("annotation:ratings_upload", args=[dataset.pk])
    yield (
        "annotation:ratings_upload",
        upload,
        {"file": ratings_file(), "survey_name": "staff-upload", "scale_min": 1, "scale_max": 5},
    )
    for action in ("approve", "reject", "bonus", "block", "expire", "extend", "publish", "sync", "apply_policy"):
        yield (
            "annotation:mturk_action",
            mturk_url,
            {
                "action": action,
                "worker_id": "AWORKER",
                "reason": "x",
                "assignment_id": "3ASG",
                "amount_dollars": "1",
                "confirm": "yes",
            },
        )
    yield "annotation:mturk_action", mturk_url, mturk_settings_data(turk)
    override = reverse("annotation:quality_override", args=[survey.pk, annotator.pk])
    yield "annotation:quality_override", override, {"action": "exclude", "note": "staff says so"}
    yield "scoring:dataset_metrics", reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["bleu1"]}
    # judging a dataset's pairs with alice's judge: the judge is looked up with judges_changeable_by
    judge_pairs = reverse("scoring:judge_dataset_pairs", args=[study["judge"].pk])
    yield "scoring:judge_dataset_pairs", judge_pairs, {"dataset": dataset.pk}


def mturk_settings_data(turk):
    row = mturk_services.mturk_settings_ensure(survey=turk)
    return {
        "action": "settings",
        "title": "Changed by someone",
        "description": row.description or "d",
        "keywords": row.keywords or "k",
        "auto_approval_delay_seconds": 3600,
        "lifetime_seconds": 86400,
        "frame_height": 900,
        "locales": "US",
        "min_approval_rate": 90,
        "min_approved_hits": 10,
    }


def test_staff_without_permission_get_404_on_every_write_and_nothing_changes(client, staff, study):
    client.force_login(staff)
    for name, url, data in write_requests(study):
        before = fingerprint()
        response = client.post(url, data)
        assert response.status_code == 404, (name, url, data.get("action"), response.status_code)
        assert fingerprint() == before, f"{name} {url} wrote to the database"
    assert Survey.objects.get(pk=study["survey"].pk).status == Survey.Status.LIVE


def test_staff_without_permission_still_read_every_study(client, staff, study, settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 10
    settings.MEDIA_ROOT = tmp_path
    client.force_login(staff)
    survey, dataset = study["survey"], study["dataset"]
    for url in (
        reverse("annotation:dataset_detail", args=[dataset.pk]),
        reverse("annotation:survey_detail", args=[survey.pk]),
        reverse("annotation:quality_survey", args=[survey.pk]),
        reverse("annotation:mturk_survey", args=[study["turk"].pk]),
        reverse("scoring:dataset_metrics", args=[dataset.pk]),
        reverse("analysis:dataset_report", args=[dataset.pk]),
        reverse("analysis:survey_report", args=[survey.pk]),
    ):
        assert client.get(url).status_code == 200, url


def test_forms_that_start_work_offer_staff_only_their_own_datasets(staff, manager, admin_user, study):
    dataset = study["dataset"]
    for form_class in (TrainForm, ExperimentForm):
        assert dataset not in form_class(user=staff).fields["dataset"].queryset
        assert dataset in form_class(user=manager).fields["dataset"].queryset
        assert dataset in form_class(user=admin_user).fields["dataset"].queryset


def test_a_staff_post_naming_anothers_dataset_in_the_survey_form_creates_nothing(client, staff, study):
    client.force_login(staff)
    before = fingerprint()
    response = client.post(reverse("annotation:survey_new"), {"dataset": study["dataset"].pk, "name": "mine"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert fingerprint() == before


def test_the_selectors_separate_reading_from_changing(request, staff, manager, admin_user, study):
    researcher, other_researcher = request.getfixturevalue("researcher"), request.getfixturevalue("other_researcher")
    dataset, survey = study["dataset"], study["survey"]
    for user in (staff, manager, admin_user, researcher):
        assert selectors.datasets_visible_to(user=user).filter(pk=dataset.pk).exists()
        assert selectors.surveys_visible_to(user=user).filter(pk=survey.pk).exists()
    for user, may in (
        (staff, False),
        (other_researcher, False),
        (manager, True),
        (admin_user, True),
        (researcher, True),
    ):
        assert selectors.datasets_changeable_by(user=user).filter(pk=dataset.pk).exists() is may, user
        assert selectors.surveys_changeable_by(user=user).filter(pk=survey.pk).exists() is may, user
        assert selectors.may_change_study(user=user, study=dataset) is may, user
    assert not selectors.datasets_visible_to(user=other_researcher).filter(pk=dataset.pk).exists()


@pytest.mark.parametrize("who", ["admin_user", "manager"])
def test_a_superuser_and_a_holder_of_the_permission_may_write(client, request, who, study):
    client.force_login(request.getfixturevalue(who))
    survey, dataset, annotator, turk = study["survey"], study["dataset"], study["annotator"], study["turk"]

    review = reverse("annotation:survey_review", args=[survey.pk, annotator.pk])
    assert client.post(review, {"action": "exclude", "reason": "checked"}).status_code == 302
    assert ReviewAction.objects.filter(survey=survey, annotator=annotator).exists()

    override = reverse("annotation:quality_override", args=[survey.pk, annotator.pk])
    assert client.post(override, {"action": "accept", "note": "checked"}).status_code == 302
    assert ExclusionDecision.objects.filter(survey=survey, annotator=annotator, excluded=False).exists()

    client.post(reverse("annotation:mturk_action", args=[turk.pk]), mturk_settings_data(turk))
    assert MTurkSettings.objects.get(survey=turk).title == "Changed by someone"

    upload = reverse("annotation:ratings_upload", args=[dataset.pk])
    data = {"file": ratings_file(), "survey_name": f"upload-by-{who}", "scale_min": 1, "scale_max": 5}
    assert client.post(upload, data).status_code == 302
    assert Survey.objects.filter(dataset=dataset, name=f"upload-by-{who}").exists()

    assert client.post(reverse("scoring:dataset_metrics", args=[dataset.pk]), {"metric": ["bleu1"]}).status_code == 302
    assert MetricRun.objects.filter(dataset=dataset).exists()

    assert (
        client.post(reverse("annotation:survey_action", args=[survey.pk, "close"]), {"confirm": "yes"}).status_code
        == 302
    )
    assert Survey.objects.get(pk=survey.pk).status == Survey.Status.CLOSED


# --- every endpoint, so a new one is not forgotten ------------------------------------------------
SAMPLE_ARGUMENTS = {
    "action": ["close"],
    "what": ["ratings"],
    "fmt": ["csv", "json", "svg"],
    "kind": ["scatter"],
}


def _patterns(resolver, namespace=None):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, entry.namespace or namespace)
        elif isinstance(entry, URLPattern) and namespace in NAMESPACES and entry.name:
            yield f"{namespace}:{entry.name}", entry


def _sample_url(name, pattern, study):
    """The pattern filled with alice's objects (dataset, survey, annotator...) where it takes ids."""
    survey = study["turk"] if "mturk" in name else study["survey"]
    route = str(pattern.pattern)
    ids = {
        "pk": study["dataset"].pk
        if route.lstrip("^").startswith("datasets")
        else study["chat_system"].pk
        if name.startswith("annotation:chat_system")
        else survey.pk,
        "dataset_id": study["dataset"].pk,
        "survey_id": survey.pk,
        "annotator_pk": study["annotator"].pk,
        "annotator_id": study["annotator"].pk,
        "run_id": study["training_run" if name.startswith("scoring:adem") else "metric_run"].pk,
        "name": "no-such-model",
        "judge_id": study["judge"].pk,
    }
    keys = list(pattern.pattern.regex.groupindex)
    choices = [SAMPLE_ARGUMENTS.get(key) or [ids.get(key, 1)] for key in keys]
    for values in itertools.product(*choices):
        try:
            return reverse(name, kwargs=dict(zip(keys, values, strict=True)))
        except NoReverseMatch:
            continue
    raise AssertionError(f"cannot build a sample URL for {name}: add its argument to SAMPLE_ARGUMENTS")


def test_every_endpoint_that_accepts_a_staff_post_is_classified_and_writes_nothing(client, staff, study):
    """A POST from staff on alice's study: 405 (GET only), 404 (a write refused), or a known read/own form."""
    client.force_login(staff)
    patterns = list(_patterns(get_resolver()))
    assert len(patterns) > 20
    unclassified = []
    for name, pattern in patterns:
        if name in NOT_RESEARCHER_PAGES or "token" in pattern.pattern.regex.groupindex:
            continue
        url = _sample_url(name, pattern, study)
        before = fingerprint()
        status = client.post(url, {"action": "close", "note": "x", "reason": "x"}).status_code
        assert fingerprint() == before, f"a staff POST to {name} ({url}) wrote to the database"
        if status in (404, 405) or name in READS_IGNORING_THE_METHOD or name in OWN_ACCOUNT_FORMS:
            continue
        unclassified.append(f"{name} {url} -> {status}")
    assert not unclassified, (
        "these endpoints accept a POST from staff on another's study: a write must look its object up with "
        "selectors.*_changeable_by (404); a read that ignores the method goes into READS_IGNORING_THE_METHOD: "
        + "; ".join(unclassified)
    )


def test_staff_reading_a_survey_see_no_buttons_that_would_refuse_them(client, staff, study, researcher):
    url = reverse("annotation:survey_detail", args=[study["survey"].pk])
    client.force_login(staff)
    page = client.get(url).content.decode()
    assert 'id="read-only"' in page
    assert 'id="close"' not in page and "action='pause'" not in page and "/pause/" not in page
    client.force_login(researcher)
    page = client.get(url).content.decode()
    assert 'id="close"' in page and "/pause/" in page and 'id="read-only"' not in page
