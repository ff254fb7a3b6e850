"""Helpers for the MTurk tests: a small MTurk survey built with the ORM, and a stubbed boto3 client.

The only fake is botocore's Stubber on a real boto3 `mturk` client: every request is checked
against the service's own API model, and responses follow MTurk's documented shapes.
"""

import datetime as dt

import boto3
from botocore.stub import Stubber

from annotation.crowd.mturk import provider as mturk_module
from annotation.models import HIT, Aspect, Assignment, HITItem, Response, Survey
from tests.factories import load_dataset_records

PUBLIC_BASE_URL = "https://ratelab.example.org"
HIT_TYPE_ID = "3HITTYPE0000000000000000000000"
QUALIFICATION_ID = "3EXCLUSIONQUAL000000000000000"
CREATED = dt.datetime(2026, 11, 1, 12, 0, tzinfo=dt.UTC)
EXPIRES = dt.datetime(2030, 1, 8, 12, 0, tzinfo=dt.UTC)


def hit_id(n):
    return f"3HIT{n:026d}"


def assignment_id(n):
    return f"3ASG{n:026d}"


def make_survey(owner, *, n_hits=2, assignments=3, name="turk-study", status=Survey.Status.LIVE):
    """A live MTurk survey with `n_hits` HITs: two responses each, plus one instructed check."""
    records = [
        {
            "context_id": f"c{i}",
            "context": [f"hello number {i}", "hi there, how are you?"],
            "references": ["fine thanks"],
            "responses": [
                {"system": "hred", "text": f"i am fine {i}"},
                {"system": "tfidf", "text": f"<b>what</b> {i}"},
            ],
        }
        for i in range(n_hits)
    ]
    dataset = load_dataset_records(records=records, name=f"{name}-data", owner=owner)
    survey = Survey.objects.create(
        dataset=dataset,
        name=name,
        owner=owner,
        provider=Survey.Provider.MTURK,
        status=status,
        contexts_per_hit=1,
        assignments_per_hit=assignments,
        reward_cents=50,
        assignment_minutes=30,
    )
    Aspect.objects.create(survey=survey, key=Aspect.OVERALL)
    for position, context in enumerate(dataset.contexts.order_by("position")):
        hit = HIT.objects.create(survey=survey, position=position)
        for item_position, response in enumerate(Response.objects.filter(context=context).order_by("system__name")):
            HITItem.objects.create(
                hit=hit, position=item_position, kind=HITItem.Kind.RESPONSE, context=context, response=response
            )
        HITItem.objects.create(hit=hit, position=9, kind=HITItem.Kind.INSTRUCTED, instructed_score=2)
        Assignment.objects.bulk_create(Assignment(hit=hit, slot=slot) for slot in range(assignments))
    return survey


def stubbed_client(**credentials):
    credentials = credentials or {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    client = boto3.client(
        "mturk", region_name="us-east-1", endpoint_url=mturk_module.REQUESTER_ENDPOINTS[True], **credentials
    )
    return client, Stubber(client)


def hit_shape(n, *, status="Assignable", max_assignments=3, token=""):
    """A HIT as MTurk documents it (CreateHITWithHITType, GetHIT, ListReviewableHITs)."""
    return {
        "HITId": hit_id(n),
        "HITTypeId": HIT_TYPE_ID,
        "HITGroupId": "3GROUP000000000000000000000000",
        "CreationTime": CREATED,
        "Title": "Rate replies",
        "Description": "Rate replies in short conversations",
        "HITStatus": status,
        "MaxAssignments": max_assignments,
        "Reward": "0.50",
        "AutoApprovalDelayInSeconds": 259200,
        "Expiration": EXPIRES,
        "AssignmentDurationInSeconds": 1800,
        "RequesterAnnotation": token,
        "HITReviewStatus": "NotReviewed",
        "NumberOfAssignmentsPending": 0,
        "NumberOfAssignmentsAvailable": max_assignments,
        "NumberOfAssignmentsCompleted": 0,
    }


def assignment_shape(n, *, hit, worker, status="Submitted"):
    """An assignment as ListAssignmentsForHIT documents it (ExternalQuestion answers are empty)."""
    shape = {
        "AssignmentId": assignment_id(n),
        "WorkerId": worker,
        "HITId": hit,
        "AssignmentStatus": status,
        "AutoApprovalTime": EXPIRES,
        "AcceptTime": CREATED,
        "SubmitTime": CREATED + dt.timedelta(minutes=7),
        "Deadline": CREATED + dt.timedelta(minutes=30),
        "Answer": '<?xml version="1.0"?><QuestionFormAnswers/>',
    }
    if status == "Approved":
        shape["ApprovalTime"] = CREATED + dt.timedelta(hours=1)
    return shape


def install_stub(monkeypatch, settings, **credentials):
    """Point the provider at a stubbed real client; returns (client, stubber)."""
    settings.PUBLIC_BASE_URL = PUBLIC_BASE_URL
    client, stubber = stubbed_client(**credentials)
    monkeypatch.setattr(mturk_module, "mturk_client", lambda *, sandbox: client)
    return client, stubber


def expected_question(survey):
    return mturk_module.pure.external_question_xml(url=f"{PUBLIC_BASE_URL}/mturk/{survey.token}/", frame_height=0)


def expect_prelude(stubber, survey, *, balance="10000.00", new_qualification=True):
    """The calls before any HIT is created: balance, exclusion qualification (once), HIT type."""
    stubber.add_response("get_account_balance", {"AvailableBalance": balance, "OnHoldBalance": "0.00"}, {})
    if new_qualification:
        stubber.add_response(
            "create_qualification_type",
            {
                "QualificationType": {
                    "QualificationTypeId": QUALIFICATION_ID,
                    "CreationTime": CREATED,
                    "Name": "RateLab exclusion",
                    "Description": "excluded workers",
                    "QualificationTypeStatus": "Active",
                    "IsRequestable": True,
                    "AutoGranted": False,
                }
            },
            {
                "Name": "RateLab exclusion",
                "Description": "Workers excluded from RateLab rating studies (failed checks or low agreement).",
                "Keywords": "ratelab,exclusion",
                "QualificationTypeStatus": "Active",
            },
        )
    stubber.add_response(
        "create_hit_type",
        {"HITTypeId": HIT_TYPE_ID},
        {
            "Title": f"Rate replies in short conversations ({survey.name})",
            "Description": "Read short conversations and judge how appropriate each candidate reply is, "
            "on a 1-5 scale.",
            "Keywords": "dialogue, rating, conversation, survey",
            "Reward": "0.50",
            "AssignmentDurationInSeconds": 1800,
            "AutoApprovalDelayInSeconds": 259200,
            "QualificationRequirements": [
                {
                    "QualificationTypeId": "00000000000000000071",
                    "Comparator": "EqualTo",
                    "LocaleValues": [{"Country": "US"}],
                    "ActionsGuarded": "Accept",
                },
                {
                    "QualificationTypeId": "000000000000000000L0",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [95],
                    "ActionsGuarded": "Accept",
                },
                {
                    "QualificationTypeId": "00000000000000000040",
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [500],
                    "ActionsGuarded": "Accept",
                },
                {
                    "QualificationTypeId": QUALIFICATION_ID,
                    "Comparator": "DoesNotExist",
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                },
            ],
        },
    )


def expect_prelude_any(stubber):
    """The calls before any HIT is created, their requests checked only against MTurk's API model
    (for kinds whose HIT type reads otherwise than the rating kind's)."""
    stubber.add_response("get_account_balance", {"AvailableBalance": "10000.00", "OnHoldBalance": "0.00"}, {})
    qualification = {
        "QualificationTypeId": QUALIFICATION_ID,
        "CreationTime": CREATED,
        "Name": "RateLab exclusion",
        "Description": "excluded workers",
        "QualificationTypeStatus": "Active",
        "IsRequestable": True,
        "AutoGranted": False,
    }
    stubber.add_response("create_qualification_type", {"QualificationType": qualification}, None)
    stubber.add_response("create_hit_type", {"HITTypeId": HIT_TYPE_ID}, None)


def expect_create_hit(stubber, survey, hit, n):
    token = mturk_module.hit_request_token(survey=survey, hit=hit, sandbox=True)
    stubber.add_response(
        "create_hit_with_hit_type",
        {"HIT": hit_shape(n, max_assignments=survey.assignments_per_hit, token=token)},
        {
            "HITTypeId": HIT_TYPE_ID,
            "MaxAssignments": survey.assignments_per_hit,
            "LifetimeInSeconds": 7 * 24 * 3600,
            "Question": expected_question(survey),
            "RequesterAnnotation": token,
            "UniqueRequestToken": token,
        },
    )
    return token


def publish_all(stubber, survey):
    """Stub and run a complete first publish; returns the created HIT ids by position."""
    expect_prelude(stubber, survey)
    hits = list(survey.hits.order_by("position"))
    for n, hit in enumerate(hits):
        expect_create_hit(stubber, survey, hit, n)
    mturk_module.MTurkProvider(sandbox=True).publish(survey=survey)
    return [hit_id(n) for n in range(len(hits))]


def expect_get_assignment(stubber, assignment, *, hit, worker, status="Submitted", max_assignments=3):
    """GetAssignment answering as MTurk documents it: {'Assignment': {...}, 'HIT': {...}}."""
    shape = assignment_shape(0, hit=hit, worker=worker, status=status)
    shape["AssignmentId"] = assignment
    hit_n = int(hit[4:]) if hit.startswith("3HIT") else 0
    stubber.add_response(
        "get_assignment",
        {"Assignment": shape, "HIT": {**hit_shape(hit_n, max_assignments=max_assignments), "HITId": hit}},
        {"AssignmentId": assignment},
    )


def expect_unknown_assignment(stubber, assignment):
    """GetAssignment for an id MTurk never issued: a RequestError, as the API reference lists."""
    stubber.add_client_error(
        "get_assignment",
        service_error_code="RequestError",
        service_message=f"Assignment {assignment} does not exist. (1732450000000)",
        http_status_code=400,
        expected_params={"AssignmentId": assignment},
    )
