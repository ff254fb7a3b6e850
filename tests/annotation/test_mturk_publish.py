"""Publishing HITs on MTurk through a real boto3 client with botocore's Stubber."""

import pytest
from botocore.stub import ANY

from annotation.crowd.base import ProviderError
from annotation.crowd.mturk import provider as mturk_module
from annotation.crowd.mturk.errors import MTurkRequestError, MTurkTransientError
from annotation.crowd.mturk.provider import MTurkProvider
from annotation.crowd.mturk.pure import EXTERNAL_QUESTION_NS, parse_external_question
from annotation.crowd.mturk.tasks import publish_survey_hits
from annotation.models import HIT
from annotation.models.mturk import MTurkExclusionQualification, MTurkHIT, MTurkSettings
from tests.annotation.mturk_helpers import (
    HIT_TYPE_ID,
    QUALIFICATION_ID,
    expect_create_hit,
    expect_prelude,
    hit_id,
    hit_shape,
    make_survey,
    publish_all,
)


def test_publish_creates_hit_type_with_qualifications_and_one_hit_per_generated_hit(stubber, researcher):
    survey = make_survey(researcher, n_hits=3)
    published = publish_all(stubber, survey)

    assert (
        list(HIT.objects.filter(survey=survey).order_by("position").values_list("external_id", flat=True)) == published
    )
    row = MTurkSettings.objects.get(survey=survey)
    assert row.hit_type_id == HIT_TYPE_ID
    assert row.exclusion_qualification_id == QUALIFICATION_ID
    assert row.sandbox is True
    assert MTurkExclusionQualification.objects.get(sandbox=True).qualification_type_id == QUALIFICATION_ID
    assert MTurkHIT.objects.filter(hit__survey=survey, hit_type_id=HIT_TYPE_ID).count() == 3


def test_external_question_sent_to_mturk_points_at_the_https_task_page(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    sent = {}

    def remember(params, **kwargs):
        sent.update(params)

    stubber.client.meta.events.register("provide-client-params.mturk.CreateHITWithHITType", remember)
    publish_all(stubber, survey)

    url, height = parse_external_question(sent["Question"])
    assert url == f"https://ratelab.example.org/mturk/{survey.token}/"
    assert height == 0
    assert f'xmlns="{EXTERNAL_QUESTION_NS}"' in sent["Question"]
    assert sent["MaxAssignments"] == 3


def test_unique_request_token_is_stable_for_a_hit_and_differs_between_hits(researcher, db):
    survey = make_survey(researcher, n_hits=2)
    first, second = survey.hits.order_by("position")
    token = mturk_module.hit_request_token(survey=survey, hit=first, sandbox=True)
    assert token == mturk_module.hit_request_token(survey=survey, hit=HIT.objects.get(pk=first.pk), sandbox=True)
    assert token != mturk_module.hit_request_token(survey=survey, hit=second, sandbox=True)
    assert token != mturk_module.hit_request_token(survey=survey, hit=first, sandbox=False)
    assert len(token) <= 64


def test_publishing_again_sends_nothing_when_every_hit_is_published(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    result = MTurkProvider(sandbox=True).publish(survey=survey)  # the stubber would fail on any call
    assert result["created"] == 0
    assert MTurkHIT.objects.count() == 2


def test_duplicate_request_error_adopts_the_hit_mturk_already_made(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    expect_prelude(stubber, survey)
    hit = survey.hits.get()
    token = mturk_module.hit_request_token(survey=survey, hit=hit, sandbox=True)
    stubber.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message=f"The HIT with ID {hit_id(0)} already exists (UniqueRequestToken {token}).",
        http_status_code=400,
        expected_params={
            "HITTypeId": HIT_TYPE_ID,
            "MaxAssignments": 3,
            "LifetimeInSeconds": ANY,
            "Question": ANY,
            "RequesterAnnotation": token,
            "UniqueRequestToken": token,
        },
    )
    stubber.add_response("get_hit", {"HIT": hit_shape(0, token=token)}, {"HITId": hit_id(0)})

    MTurkProvider(sandbox=True).publish(survey=survey)
    hit.refresh_from_db()
    assert hit.external_id == hit_id(0)
    assert MTurkHIT.objects.get().request_token == token


def test_publish_refuses_when_the_balance_does_not_cover_the_cost(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)  # 2 x 3 x $0.50 + 20% = $3.60
    stubber.add_response("get_account_balance", {"AvailableBalance": "3.59"}, {})
    with pytest.raises(ProviderError, match=r"balance \$3.59 is below the cost \$3.60"):
        MTurkProvider(sandbox=True).publish(survey=survey)
    assert not MTurkHIT.objects.exists()


def test_publish_refuses_without_an_https_public_base_url(stubber, researcher, settings):
    survey = make_survey(researcher, n_hits=1)
    settings.PUBLIC_BASE_URL = "http://ratelab.example.org"
    with pytest.raises(ProviderError, match="PUBLIC_BASE_URL"):
        MTurkProvider(sandbox=True).publish(survey=survey)


def test_partial_failure_leaves_a_survey_that_a_retry_completes_without_duplicates(stubber, researcher):
    survey = make_survey(researcher, n_hits=50, assignments=1)
    hits = list(survey.hits.order_by("position"))
    expect_prelude(stubber, survey)
    for n, hit in enumerate(hits[:36]):
        expect_create_hit(stubber, survey, hit, n)
    stubber.add_client_error(
        "create_hit_with_hit_type", service_error_code="RequestError", service_message="Invalid request."
    )
    with pytest.raises(MTurkRequestError):
        publish_survey_hits.apply(args=(survey.pk,)).get()
    assert MTurkHIT.objects.count() == 36
    assert HIT.objects.filter(survey=survey).exclude(external_id="").count() == 36
    stubber.assert_no_pending_responses()

    # The retry asks MTurk only for HITs 37-50, with the same tokens the first try would have used.
    expect_prelude(stubber, survey, new_qualification=False)
    for n, hit in enumerate(hits[36:], start=36):
        expect_create_hit(stubber, survey, hit, n)
    publish_survey_hits.apply(args=(survey.pk,)).get()

    external_ids = list(HIT.objects.filter(survey=survey).order_by("position").values_list("external_id", flat=True))
    assert external_ids == [hit_id(n) for n in range(50)]
    assert MTurkHIT.objects.count() == 50
    assert len(set(MTurkHIT.objects.values_list("request_token", flat=True))) == 50


def test_throttling_is_retried_by_the_task_and_publishes_the_rest(stubber, researcher):
    survey = make_survey(researcher, n_hits=3)
    hits = list(survey.hits.order_by("position"))
    expect_prelude(stubber, survey)
    expect_create_hit(stubber, survey, hits[0], 0)
    stubber.add_client_error(
        "create_hit_with_hit_type", service_error_code="ThrottlingException", service_message="Rate exceeded"
    )
    # The task's automatic retry (eager here): HIT 0 is done, so only HITs 1 and 2 are created.
    expect_prelude(stubber, survey, new_qualification=False)
    expect_create_hit(stubber, survey, hits[1], 1)
    expect_create_hit(stubber, survey, hits[2], 2)

    # throw=False is how a worker runs it: Celery's Retry reschedules instead of propagating.
    result = publish_survey_hits.apply(args=(survey.pk,), throw=False)
    assert result.successful()
    assert result.get()["created"] == 2
    assert MTurkHIT.objects.count() == 3


def test_service_unavailable_is_transient_but_other_errors_are_not(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    stubber.add_client_error("get_account_balance", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(MTurkTransientError):
        MTurkProvider(sandbox=True).balance_cents()
    stubber.add_client_error("get_account_balance", service_error_code="RequestError", http_status_code=400)
    with pytest.raises(MTurkRequestError) as refused:
        MTurkProvider(sandbox=True).balance_cents()
    assert not isinstance(refused.value, MTurkTransientError)
    assert survey.hits.count() == 1


def test_tasks_retry_only_throttling_and_service_faults():
    assert publish_survey_hits.autoretry_for == (MTurkTransientError,)
    assert publish_survey_hits.max_retries == 6
    assert publish_survey_hits.retry_backoff


def test_duplicate_request_without_a_hit_id_is_found_by_paging_through_list_hits(stubber, researcher):
    survey = make_survey(researcher, n_hits=1)
    expect_prelude(stubber, survey)
    hit = survey.hits.get()
    token = mturk_module.hit_request_token(survey=survey, hit=hit, sandbox=True)
    stubber.add_client_error(
        "create_hit_with_hit_type",
        service_error_code="RequestError",
        service_message="There is already a HIT for this UniqueRequestToken.",
    )
    stubber.add_response(
        "list_hits",
        {"NextToken": "hits-page-2", "NumResults": 1, "HITs": [hit_shape(7, token="someone-else")]},
        {"MaxResults": 100},
    )
    stubber.add_response(
        "list_hits",
        {"NumResults": 1, "HITs": [hit_shape(8, token=token)]},
        {"MaxResults": 100, "NextToken": "hits-page-2"},
    )
    MTurkProvider(sandbox=True).publish(survey=survey)
    hit.refresh_from_db()
    assert hit.external_id == hit_id(8)


def test_an_existing_exclusion_qualification_is_found_by_name(stubber, db):
    stubber.add_client_error(
        "create_qualification_type",
        service_error_code="RequestError",
        service_message="You have already created a QualificationType with this name.",
    )
    stubber.add_response(
        "list_qualification_types",
        {
            "NumResults": 1,
            "QualificationTypes": [
                {
                    "QualificationTypeId": QUALIFICATION_ID,
                    "Name": "RateLab exclusion",
                    "QualificationTypeStatus": "Active",
                }
            ],
        },
        {"Query": "RateLab exclusion", "MustBeRequestable": False, "MustBeOwnedByCaller": True, "MaxResults": 100},
    )
    provider = MTurkProvider(sandbox=True)
    assert provider.exclusion_qualification_id() == QUALIFICATION_ID
    assert provider.exclusion_qualification_id() == QUALIFICATION_ID  # stored: no second request
    assert MTurkExclusionQualification.objects.get(sandbox=True).qualification_type_id == QUALIFICATION_ID
