"""Excluding and blocking a Prolific participant: their work leaves the analysis, RateLab refuses
them later work, and they join the researcher's participant group on Prolific, which every later
study of the researcher excludes with a `participant_group_blocklist` filter.

respx answers Prolific's documented calls: `GET participant-groups/?filter[workspace_id]=<id>` (answers
{"results": [groups]}), `POST participant-groups/` (name, workspace_id,
description, participant_ids; answers the group with its id), `POST participant-groups/{id}/participants/`
(participant_ids; members already there are ignored) — https://docs.prolific.com/api-reference/participant-groups
— and the study's `filters` entry `{"filter_id", "selected_values"}` (https://docs.prolific.com/api-reference/filters).
"""

import json

import httpx
import pytest
from django.test import Client

from annotation import services
from annotation.models import ExclusionDecision, ProlificBlockList, ProlificStudy, ReviewAction, Survey
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    do_task,
    entry,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    submissions_answer,
)

GROUP_ID = "6b1f8c2d3e4a5b6c7d8e9f00"
WORKSPACE_ID = "64a0b1c2d3e4f5a6b7c8d9e0"


@pytest.fixture
def survey(researcher, api, settings):
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE_ID
    survey = make_prolific_survey(researcher, reward_cents=150, minutes=10)
    publish(api, survey)
    return survey


def no_groups_yet(api):
    return api.get("participant-groups/", params={"filter[workspace_id]": WORKSPACE_ID}).mock(
        return_value=httpx.Response(200, json={"results": []})
    )


def two_confirmed_participants(survey, api):
    for n in (1, 2):
        browser = Client()  # each participant in a browser of their own
        do_task(browser, entry(browser, survey, participant=pid(n), session_id=session(n)))
    api.get(f"studies/{STUDY_ID}/submissions/").mock(
        return_value=httpx.Response(
            200,
            json=submissions_answer((session(1), pid(1), "AWAITING REVIEW"), (session(2), pid(2), "AWAITING REVIEW")),
        )
    )
    provider().sync(survey=survey)
    return {row.participant_id: row for row in ProlificStudy.objects.get(survey=survey).submissions.all()}


def block(researcher_client, survey, row, reason="Answered every item in two seconds."):
    return researcher_client.post(
        f"/surveys/{survey.pk}/prolific/action/",
        {"action": "block", "submission": row.pk, "reason": reason, "confirm": "yes"},
        follow=True,
    )


def test_blocking_asks_first_naming_the_participant_and_the_reason_and_changes_nothing(researcher_client, survey, api):
    rows = two_confirmed_participants(survey, api)
    groups = api.post("participant-groups/")
    page = researcher_client.post(
        f"/surveys/{survey.pk}/prolific/action/",
        {"action": "block", "submission": rows[pid(1)].pk, "reason": "Answered every item in two seconds."},
    ).content.decode()
    assert f"Exclude and block {pid(1)}?" in page and "Answered every item in two seconds." in page
    assert "cannot take them off it again" in page and 'name="confirm" value="yes"' in page
    assert not groups.called and not ReviewAction.objects.exists()


def test_blocking_excludes_the_work_blocks_in_ratelab_and_creates_the_group_on_prolific(
    researcher_client, survey, api, researcher
):
    rows = two_confirmed_participants(survey, api)
    listed = no_groups_yet(api)
    name = f"RateLab block list #{researcher.pk} (alice)"
    created = api.post("participant-groups/").mock(
        return_value=httpx.Response(201, json={"id": GROUP_ID, "name": name, "participant_count": 1})
    )
    text = block(researcher_client, survey, rows[pid(1)]).content.decode()
    assert f"blocked here and in Prolific participant group {GROUP_ID}" in text
    assert listed.call_count == 1
    assert json.loads(created.calls.last.request.content) == {
        "name": name,
        "workspace_id": WORKSPACE_ID,
        "description": "Participants blocked from later studies by RateLab.",
        "participant_ids": [pid(1)],
    }
    annotator = rows[pid(1)].annotator
    decision = ExclusionDecision.objects.filter(survey=survey, annotator=annotator).latest("pk")
    assert decision.excluded and decision.note == "Answered every item in two seconds."
    assert ReviewAction.objects.filter(annotator=annotator, action=ReviewAction.Action.BLOCK).exists()
    assert ProlificBlockList.objects.get(owner=researcher).group_id == GROUP_ID

    added = api.post(f"participant-groups/{GROUP_ID}/participants/").mock(
        return_value=httpx.Response(200, json={"results": [{"participant_id": pid(1)}, {"participant_id": pid(2)}]})
    )
    block(researcher_client, survey, rows[pid(2)])
    block(researcher_client, survey, rows[pid(2)])  # sent twice: Prolific ignores members already there
    assert created.call_count == 1 and listed.call_count == 1  # the stored id is used: no more lookups
    assert [json.loads(call.request.content) for call in added.calls] == [{"participant_ids": [pid(2)]}] * 2


def test_a_block_retried_after_a_lost_creation_finds_the_group_instead_of_making_a_second(
    researcher_client, survey, api, researcher
):
    rows = two_confirmed_participants(survey, api)
    name = f"RateLab block list #{researcher.pk} (alice)"
    groups = []  # what Prolific holds: the first creation reached it, its answer did not reach us

    def create_then_time_out(request):
        groups.append({"id": GROUP_ID, "name": json.loads(request.content)["name"], "is_deleted": False})
        raise httpx.ReadTimeout("no answer", request=request)

    listed = api.get("participant-groups/", params={"filter[workspace_id]": WORKSPACE_ID}).mock(
        side_effect=lambda request: httpx.Response(
            200,
            json={
                "results": [
                    {"id": "0000other", "name": "Pilot participants", "is_deleted": False},
                    {"id": "0000deleted", "name": name, "is_deleted": True},
                    *groups,
                ]
            },
        )
    )
    created = api.post("participant-groups/").mock(side_effect=create_then_time_out)
    added = api.post(f"participant-groups/{GROUP_ID}/participants/").mock(
        return_value=httpx.Response(200, json={"results": [{"participant_id": pid(1)}]})
    )
    text = block(researcher_client, survey, rows[pid(1)]).content.decode()
    assert "did not answer POST participant-groups/ in time" in text
    assert not ProlificBlockList.objects.exclude(group_id="").exists()

    text = block(researcher_client, survey, rows[pid(1)]).content.decode()  # the researcher tries again
    assert f"blocked here and in Prolific participant group {GROUP_ID}" in text
    assert created.call_count == 1 and listed.call_count == 2
    assert [json.loads(call.request.content) for call in added.calls] == [{"participant_ids": [pid(1)]}]
    assert ProlificBlockList.objects.get(owner=researcher).group_id == GROUP_ID


def test_the_next_study_of_the_researcher_excludes_the_group(researcher_client, survey, api, researcher):
    rows = two_confirmed_participants(survey, api)
    no_groups_yet(api)
    api.post("participant-groups/").mock(return_value=httpx.Response(201, json={"id": GROUP_ID}))
    block(researcher_client, survey, rows[pid(1)])
    later = make_prolific_survey(researcher, reward_cents=150, minutes=10, name="wave-2")
    Survey.objects.filter(pk=later.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    created = api.post("studies/").mock(return_value=httpx.Response(201, json={"id": "60aca280709ee40ec37d9999"}))
    api.post("studies/60aca280709ee40ec37d9999/transition/").mock(
        return_value=httpx.Response(200, json={"status": "ACTIVE"})
    )
    services.survey_launch(survey=later)
    body = json.loads(created.calls.last.request.content)
    assert body["filters"] == [{"filter_id": "participant_group_blocklist", "selected_values": [GROUP_ID]}]


def test_a_participant_blocked_by_one_researcher_may_still_work_in_anothers_study(
    researcher_client, survey, api, researcher, other_researcher
):
    rows = two_confirmed_participants(survey, api)
    no_groups_yet(api)
    api.post("participant-groups/").mock(return_value=httpx.Response(201, json={"id": GROUP_ID}))
    block(researcher_client, survey, rows[pid(1)])
    assert ReviewAction.objects.get(action=ReviewAction.Action.BLOCK).actor == researcher
    mine = make_prolific_survey(researcher, reward_cents=150, minutes=10, name="wave-2")
    theirs = make_prolific_survey(other_researcher, reward_cents=150, minutes=10, name="their-study")
    study = {}
    for later in (mine, theirs):
        study[later] = f"60aca280709ee40ec37d{later.pk:04d}"
        ProlificStudy.objects.filter(survey=later).update(study_id=study[later])
    refused = entry(Client(), mine, participant=pid(1), session_id=session(7), study=study[mine])
    assert "There is no more work for you" in refused.content.decode()
    welcomed = entry(Client(), theirs, participant=pid(1), session_id=session(8), study=study[theirs])
    assert welcomed.status_code == 302 and welcomed["Location"].startswith("/a/")  # their task


def test_a_study_without_a_block_list_sends_no_filters(api, researcher, settings):
    survey = make_prolific_survey(researcher, reward_cents=150, minutes=10)
    created = publish(api, survey)
    assert "filters" not in json.loads(created.calls.last.request.content)


def test_an_unconfirmed_participant_cannot_be_blocked_and_nothing_is_sent(researcher_client, survey, api):
    browser = Client()
    do_task(browser, entry(browser, survey, participant=pid(3), session_id=session(3)))
    row = ProlificStudy.objects.get(survey=survey).submissions.get(participant_id=pid(3))
    groups = api.post("participant-groups/")
    text = block(researcher_client, survey, row).content.decode()
    assert "has not confirmed this participant" in text and groups.call_count == 0
    assert not ReviewAction.objects.exists() and not ExclusionDecision.objects.filter(source="manual").exists()


def test_without_a_workspace_the_block_stays_in_ratelab_and_the_page_says_what_to_set(
    researcher_client, survey, api, settings
):
    settings.PROLIFIC_WORKSPACE_ID = ""
    rows = two_confirmed_participants(survey, api)
    text = block(researcher_client, survey, rows[pid(1)]).content.decode()
    assert "Set PROLIFIC_WORKSPACE_ID" in text
    assert ReviewAction.objects.filter(annotator=rows[pid(1)].annotator).exists()


def test_staff_and_other_researchers_cannot_block(client, survey, api, other_researcher, django_user_model):
    rows = two_confirmed_participants(survey, api)
    staff = django_user_model.objects.create_user("staffer", password="x", is_staff=True)
    for user in (staff, other_researcher):
        client.force_login(user)
        response = client.post(
            f"/surveys/{survey.pk}/prolific/action/", {"action": "block", "submission": rows[pid(1)].pk, "reason": "x"}
        )
        assert response.status_code == 404
    assert not ReviewAction.objects.exists()


def test_the_lookup_reads_every_page_of_groups_so_a_group_on_a_later_page_is_found_not_made_again(
    researcher_client, survey, api, researcher
):
    """A workspace with many groups is listed in pages (Prolific's `_links.next`, as for submissions):
    the researcher's group, made by a block whose answer was lost, may be on the second."""
    rows = two_confirmed_participants(survey, api)
    name = f"RateLab block list #{researcher.pk} (alice)"
    second = api.get("participant-groups/", params={"filter[workspace_id]": WORKSPACE_ID, "page": "2"}).mock(
        return_value=httpx.Response(
            200, json={"results": [{"id": GROUP_ID, "name": name, "is_deleted": False}], "_links": {"next": {}}}
        )
    )
    first_page = {
        "results": [{"id": f"0000other{n}", "name": f"Pilot {n}", "is_deleted": False} for n in range(3)],
        "_links": {"next": {"href": f"participant-groups/?filter[workspace_id]={WORKSPACE_ID}&page=2"}},
    }
    api.get("participant-groups/", params={"filter[workspace_id]": WORKSPACE_ID}).mock(
        return_value=httpx.Response(200, json=first_page)
    )
    created = api.post("participant-groups/").mock(return_value=httpx.Response(201, json={"id": "0000second"}))
    added = api.post(f"participant-groups/{GROUP_ID}/participants/").mock(
        return_value=httpx.Response(200, json={"results": [{"participant_id": pid(1)}]})
    )
    text = block(researcher_client, survey, rows[pid(1)]).content.decode()
    assert f"blocked here and in Prolific participant group {GROUP_ID}" in text
    assert second.call_count == 1 and created.call_count == 0
    assert [json.loads(call.request.content) for call in added.calls] == [{"participant_ids": [pid(1)]}]
    assert ProlificBlockList.objects.get(owner=researcher).group_id == GROUP_ID
