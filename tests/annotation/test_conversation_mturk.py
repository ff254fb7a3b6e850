"""Conversation and ACUTE surveys on Mechanical Turk (issue 37): published through a real boto3
client with botocore's Stubber (every request checked against MTurk's API model), and the task page
inside MTurk's frame shows the conversations blind and stores a worker's answers, then hands the
assignment back to MTurk, through the same views as a rating HIT."""

import pytest
from django.urls import reverse

from annotation.crowd.mturk import provider as mturk_module
from annotation.kinds.registry import kind_named
from annotation.models import Assignment, ConversationJudgement, ConversationRating, Survey
from tests.annotation.conversation_study_helpers import (
    SYSTEMS,
    acute_answers,
    conversation_answers,
    make_conversation_survey,
)
from tests.annotation.mturk_helpers import CREATED, HIT_TYPE_ID, QUALIFICATION_ID, expect_create_hit, hit_id

pytestmark = pytest.mark.django_db
SANDBOX_SUBMIT = "https://workersandbox.mturk.com"


def _publish(stubber, survey):
    """Balance, the exclusion qualification, the kind's HIT type, one HIT per task; the HIT type's
    request is returned as sent."""
    sent = {}
    stubber.client.meta.events.register(
        "provide-client-params.mturk.CreateHITType", lambda params, **kwargs: sent.update(params)
    )
    stubber.add_response("get_account_balance", {"AvailableBalance": "10000.00", "OnHoldBalance": "0.00"}, {})
    qualification = {"QualificationTypeId": QUALIFICATION_ID, "CreationTime": CREATED, "Name": "RateLab exclusion",
                     "Description": "excluded workers", "QualificationTypeStatus": "Active", "IsRequestable": True,
                     "AutoGranted": False}  # fmt: skip
    stubber.add_response("create_qualification_type", {"QualificationType": qualification}, None)
    stubber.add_response("create_hit_type", {"HITTypeId": HIT_TYPE_ID}, None)
    hits = list(survey.hits.order_by("position"))
    for n, hit in enumerate(hits):
        expect_create_hit(stubber, survey, hit, n)
    mturk_module.MTurkProvider(sandbox=True).publish(survey=survey)
    return sent, hits


@pytest.mark.parametrize("task_type", ["conversation", "acute"])
def test_a_conversation_survey_publishes_as_its_kind_on_mturk(stubber, researcher, task_type):
    survey = make_conversation_survey(researcher, name=f"turk-{task_type}", task_type=task_type, provider="mturk",
                                      launch=False, contexts_per_hit=2)  # fmt: skip
    sent, hits = _publish(stubber, survey)
    wording = kind_named(task_type).wording
    assert sent["Title"] == f"{wording['title']} ({survey.name})"
    assert "1-5 scale" not in sent["Description"]  # not the rating kind's description
    assert [h.external_id for h in Survey.objects.get(pk=survey.pk).hits.order_by("position")] == [
        hit_id(n) for n in range(len(hits))
    ]


def _turk(survey, n=1):
    hit = survey.hits.order_by("position").first()
    hit.external_id = hit_id(n)
    hit.save()
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
    return {"assignmentId": f"3ASG{n:026d}", "hitId": hit.external_id, "workerId": "AWORKER1",
            "turkSubmitTo": SANDBOX_SUBMIT}  # fmt: skip


def _post(client, url, turk, answers, slot):
    data = {**turk, "assignment_token": slot.token}
    for item_id, answer in answers.items():
        data.update({f"score-{item_id}-{key}": value for key, value in answer["scores"].items()})
        data[f"seconds-{item_id}"] = "30"
        if answer.get("reason"):
            data[f"reason-{item_id}"] = answer["reason"]
    return client.post(url, data).content.decode()


def test_a_turk_worker_rates_conversations_in_the_frame_and_the_hit_goes_back(client, researcher):
    survey = make_conversation_survey(researcher, name="turk-conv", provider="mturk", launch=False)
    turk = _turk(survey)
    url = reverse("annotation:mturk_task", args=[survey.token])
    page = client.get(url, turk).content.decode()
    assert "Bot" in page and "Partner" in page
    assert not any(system in page for system in SYSTEMS)  # blind: no system names
    slot = Assignment.objects.select_related("hit__survey", "annotator").get(external_id=turk["assignmentId"])
    # a missing answer is named and nothing is stored
    answers = conversation_answers(slot, score=4)
    first = next(iter(answers))
    answers[first]["scores"].pop("overall")
    refused = _post(client, url, turk, answers, slot)
    assert "externalSubmit" not in refused and not ConversationRating.objects.filter(assignment=slot).exists()
    done = _post(client, url, turk, conversation_answers(slot, score=4), slot)
    assert f'action="{SANDBOX_SUBMIT}/mturk/externalSubmit"' in done
    assert 'name="assignmentId" value="' + turk["assignmentId"] in done
    stored = ConversationRating.objects.filter(assignment=slot, turn__isnull=True, aspect="overall")
    assert stored.count() == slot.hit.items.filter(kind="conversation").count() and set(
        stored.values_list("score", flat=True)
    ) == {4}


def test_a_turk_worker_compares_two_conversations_in_the_frame(client, researcher):
    survey = make_conversation_survey(researcher, name="turk-acute", task_type="acute", provider="mturk",
                                      launch=False)  # fmt: skip
    turk = _turk(survey, n=2)
    url = reverse("annotation:mturk_task", args=[survey.token])
    page = client.get(url, turk).content.decode()
    assert "Conversation 1" in page and "Conversation 2" in page
    assert not any(system in page for system in SYSTEMS)
    slot = Assignment.objects.select_related("hit__survey", "annotator").get(external_id=turk["assignmentId"])
    done = _post(client, url, turk, acute_answers(slot, choose="b", reason="more fun"), slot)
    assert f'action="{SANDBOX_SUBMIT}/mturk/externalSubmit"' in done
    judgements = ConversationJudgement.objects.filter(assignment=slot)
    pairs = slot.hit.items.filter(kind="conv_pair").count()
    assert judgements.count() == pairs * survey.aspects.count()
    assert set(judgements.values_list("winner", "reason")) == {("b", "more fun")}
