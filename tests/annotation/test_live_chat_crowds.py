"""Live chat surveys on the crowds (issue 38, point 6): link + code, Prolific and MTurk, each faked at
its one documented point (Prolific's API with respx, MTurk's with botocore's Stubber) and a real
local stand-in bot. The completion code (or MTurk's hand-back) comes only once the conversation has
ended and its final questions are answered; inside MTurk's frame the chat is driven through the
frame's own address, the assignment named by the form's MTurk fields."""

import uuid

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation.crowd.link_platform import platform_settings
from annotation.crowd.mturk import provider as mturk_module
from annotation.crowd.prolific.study import study_settings
from annotation.models import Assignment, ConversationRating, LinkPlatform, ProlificStudy, Survey
from tests.annotation.live_chat_helpers import chat_survey, chat_system
from tests.annotation.mturk_helpers import expect_create_hit, expect_prelude_any, hit_id
from tests.annotation.prolific_helpers import entry, pid, publish, session
from tests.stand_in_bot import stand_in_bot

pytestmark = pytest.mark.django_db
COMPLETE = "https://connect.example.org/complete?code={code}"
SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True  # the stand-in bot listens on 127.0.0.1
    cache.clear()


@pytest.fixture
def bot():
    with stand_in_bot("ok", delay=0.01) as running:
        yield running


def _survey(researcher, bot, provider, name):
    system = chat_system(researcher, bot.base_url, name=f"hidden-{name}")
    survey = chat_survey(researcher, [system], name=name, min_turns=2, max_turns=3, per_system=2, launch=False)
    Survey.objects.filter(pk=survey.pk).update(provider=provider)
    survey.refresh_from_db()
    return survey


def _launch(survey):
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
    survey.refresh_from_db()
    return survey


def _final_fields(slot, score="4"):
    item = slot.hit.items.get()
    fields = {f"score-{item.pk}-{a.key}": score for a in slot.hit.survey.aspects.filter(per_turn=False)}
    fields[f"seconds-{item.pk}"] = "95"
    return fields


def _chat(client, url, extra=None, *, end=True):
    """Two messages (the minimum) through the chat's address, then End (unless told not to)."""
    extra = extra or {}
    for text in ("hello there", "tell me more"):
        response = client.post(url, {**extra, "action": "send", "text": text, "key": uuid.uuid4().hex})
        assert response.status_code == 200, response.content[:300]
    if end:
        assert client.post(url, {**extra, "action": "end"}).status_code == 200


def test_a_link_participant_gets_the_code_only_after_the_chat_and_its_questions(researcher, bot):
    survey = _launch(_survey(researcher, bot, Survey.Provider.LINK, "link-chat"))
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    code = LinkPlatform.objects.get(survey=survey).completion_code
    worker = Client()
    task_url = worker.post(f"/l/{survey.token}/", {"workerId": "W1"})["Location"]
    assert task_url.startswith("/a/")
    slot = Assignment.objects.get(token=task_url.strip("/").split("/")[-1])
    _chat(worker, task_url + "chat/", end=False)
    finish = f"/l/{survey.token}/finish/"
    # the questions before the end: refused, nothing stored, no code
    refused = worker.post(task_url, _final_fields(slot))
    assert refused.status_code != 302 and "End the conversation first" in refused.content.decode()
    assert worker.get(finish).status_code == 403 and not ConversationRating.objects.exists()
    assert worker.post(task_url + "chat/", {"action": "end"}).status_code == 200
    assert worker.get(finish).status_code == 403, "ended, but its questions are not answered yet"
    assert worker.post(task_url, _final_fields(slot)).status_code == 302
    assert f"complete?code={code}" in worker.get(finish).content.decode()
    assert ConversationRating.objects.filter(assignment=slot, turn__isnull=True).count() == (
        survey.aspects.filter(per_turn=False).count()
    )


def test_a_prolific_participant_is_sent_back_with_the_code_only_after_the_chat(researcher, bot, api):
    survey = _survey(researcher, bot, Survey.Provider.PROLIFIC, "prolific-chat")
    study_settings(survey, reward_cents=200, minutes=10)
    created = publish(api, survey)
    assert created.called
    _launch(survey)
    code = ProlificStudy.objects.get(survey=survey).completed_code
    worker = Client()
    started = entry(worker, survey, participant=pid(1), session_id=session(1))
    assert started.status_code == 302, started.content.decode()[-1500:]
    assert started["Location"].startswith("/a/")
    task_url = started["Location"]
    slot = Assignment.objects.get(token=task_url.strip("/").split("/")[-1])
    finish = f"/p/{survey.token}/finish/"
    _chat(worker, task_url + "chat/")
    back = worker.get(finish)
    assert back.status_code == 403 and code not in back.get("Location", "") and code not in back.content.decode()
    assert worker.post(task_url, _final_fields(slot)).status_code == 302
    assert worker.get(finish)["Location"].endswith(f"cc={code}")


def _publish_on_mturk(stubber, survey):
    """Balance, the exclusion qualification, the chat's HIT type, one HIT per conversation; the HIT
    type's request as sent."""
    sent = {}
    stubber.client.meta.events.register(
        "provide-client-params.mturk.CreateHITType", lambda params, **kwargs: sent.update(params)
    )
    expect_prelude_any(stubber)
    for n, hit in enumerate(survey.hits.order_by("position")):
        expect_create_hit(stubber, survey, hit, n)
    mturk_module.MTurkProvider(sandbox=True).publish(survey=survey)
    return sent


def _turk_params(survey, n=0):
    hit = survey.hits.get(position=n)
    return {"assignmentId": f"3ASG{n:026d}", "hitId": hit.external_id, "workerId": "AWORKER1", "turkSubmitTo": SANDBOX}


def test_a_chat_survey_publishes_on_mturk_as_a_chat(stubber, researcher, bot):
    survey = _survey(researcher, bot, Survey.Provider.MTURK, "turk-chat")
    sent = _publish_on_mturk(stubber, survey)
    assert sent["Title"] == f"Chat with a chatbot and rate the conversation ({survey.name})"
    assert "hidden-" not in str(sent)  # blind: no system name reaches MTurk
    assert sorted(survey.hits.values_list("external_id", flat=True)) == [hit_id(0), hit_id(1)]


def test_a_turk_worker_chats_in_the_frame_and_the_hit_goes_back_only_after_the_questions(stubber, researcher, bot):
    survey = _survey(researcher, bot, Survey.Provider.MTURK, "turk-chat")
    _publish_on_mturk(stubber, survey)
    survey.refresh_from_db()
    turk = _turk_params(survey)
    task_url = reverse("annotation:mturk_task", args=[survey.token])
    worker = Client()
    page = worker.get(task_url, turk).content.decode()
    assert 'id="chat"' in page and "hidden-" not in page and bot.base_url not in page
    slot = Assignment.objects.get(external_id=turk["assignmentId"])
    assert f'name="assignment_token" value="{slot.token}"' in page  # what chat.js sends with each request
    chat_url = reverse("annotation:mturk_chat", args=[survey.token])
    named = {"hitId": turk["hitId"], "assignmentId": turk["assignmentId"], "assignment_token": slot.token}
    # Without the assignment's token (or with another's) the chat is not reached, and nothing is made.
    forged = {**named, "assignment_token": "not-the-token"}
    assert worker.get(chat_url, forged).status_code == 403
    assert worker.post(chat_url, {**forged, "action": "send", "text": "hi", "key": "k1"}).status_code == 403
    assert worker.get(chat_url, {k: v for k, v in named.items() if k != "assignment_token"}).status_code == 403
    assert not slot.live_chats.exists()
    # No cookie is needed: a fresh client (the frame's blocked third-party cookies) reaches the same chat.
    _chat(Client(), chat_url, named, end=False)
    state = worker.get(chat_url, named).json()["state"]
    assert [t["text"] for t in state["turns"]] == [
        "hello there", "You said: hello there", "tell me more", "You said: tell me more",
    ]  # fmt: skip
    submit = {**turk, "assignment_token": slot.token, **_final_fields(slot)}
    early = worker.post(task_url, submit).content.decode()
    assert "externalSubmit" not in early and "End the conversation first" in early
    assert not ConversationRating.objects.filter(assignment=slot).exists()
    assert worker.post(chat_url, {**named, "action": "end"}).json()["state"]["ended"] is True
    done = worker.post(task_url, submit).content.decode()
    assert f'action="{SANDBOX}/mturk/externalSubmit"' in done
    assert f'name="assignmentId" value="{turk["assignmentId"]}"' in done
    whole = ConversationRating.objects.filter(assignment=slot, turn__isnull=True)
    assert (
        set(whole.values_list("score", flat=True)) == {4}
        and whole.count() == survey.aspects.filter(per_turn=False).count()
    )
    # handed in: the chat's address says so and takes nothing more
    after = worker.post(chat_url, {**named, "action": "send", "text": "more", "key": "k9"})
    assert after.status_code == 410 and after.json()["done"] is True


def test_the_mturk_chat_address_serves_only_mturk_surveys(researcher, bot, client):
    survey = _launch(_survey(researcher, bot, Survey.Provider.LINK, "not-turk"))
    slot = Assignment.objects.filter(hit__survey=survey).first()
    named = {"hitId": slot.hit.external_id or "x", "assignmentId": "3ASGX", "assignment_token": slot.token}
    assert client.get(reverse("annotation:mturk_chat", args=[survey.token]), named).status_code == 403
