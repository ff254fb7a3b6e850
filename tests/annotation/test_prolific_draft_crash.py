"""A launch killed while its create-draft POST is in flight leaves no second draft on Prolific.

respx stands in for Prolific's account at one point: `POST studies/` makes a draft and answers it,
`GET studies/` lists the account's studies (https://docs.prolific.com/api-reference/studies/get-studies:
`results` of studies with `id`, `name`, `internal_name`, `status`). The worker's death is played
by an exception no code catches, raised once Prolific has made the draft and before its answer
reaches RateLab: nothing after the POST runs, and the launch's open transaction is rolled back,
as the database does for a connection whose process was killed. What the launch committed before
it (the draft's tag, its attempt) stays, as it would.
"""

import importlib
import json

import httpx
import pytest
from django.apps import apps as django_apps

from annotation import services
from annotation.crowd.base import ProviderError
from annotation.models import ProlificStudy, Survey
from tests.annotation.prolific_helpers import make_prolific_survey


class WorkerKilled(BaseException):
    """The process is gone: no `except Exception` (or `except ProviderError`) runs."""


class ProlificAccount:
    """The studies of one Prolific account, made and listed through the documented calls."""

    def __init__(self, api):
        self.studies = []
        self.kill_during_next_create = False
        self.refuse_next_create = False
        self.posts = 0  # create-draft requests that reached Prolific (respx counts only answered ones)
        self.created = api.post("studies/").mock(side_effect=self._create)
        self.listed = api.get("studies/").mock(side_effect=self._list)
        self.published = api.post(url__regex=r"studies/[0-9a-f]{24}/transition/$").mock(side_effect=self._publish)

    def _create(self, request):
        self.posts += 1
        if self.refuse_next_create:  # a refusal makes nothing
            self.refuse_next_create = False
            return httpx.Response(400, json={"error": {"detail": "external_study_url is not reachable."}})
        body = json.loads(request.content)
        draft = {
            "id": f"{len(self.studies) + 1:024x}",
            "name": body["name"],
            "internal_name": body["internal_name"],
            "status": "UNPUBLISHED",
            "total_available_places": body["total_available_places"],
        }
        self.studies.append(draft)  # made on Prolific's side whatever happens to the caller
        if self.kill_during_next_create:
            self.kill_during_next_create = False
            raise WorkerKilled
        return httpx.Response(201, json=draft)

    def _list(self, request):
        # the documented status filter, ?state=(UNPUBLISHED|...); without it every study is listed
        wanted = request.url.params.get("state", "").strip("()")
        states = set(wanted.split("|")) if wanted else None
        listed = [study for study in self.studies if states is None or study["status"] in states]
        return httpx.Response(200, json={"results": listed, "_links": {"next": {"href": None}}})

    def _publish(self, request):
        study_id = request.url.path.rstrip("/").split("/")[-2]
        study = next(study for study in self.studies if study["id"] == study_id)
        study["status"] = "ACTIVE"
        return httpx.Response(200, json=study)

    def drafts_of(self, survey):
        return [s for s in self.studies if s["internal_name"].startswith(f"RateLab survey {survey.pk} (")]


@pytest.fixture
def survey(researcher, api):
    survey = make_prolific_survey(researcher, name="crash-draft")
    Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.DRAFT, launched_at=None)
    survey.refresh_from_db()
    return survey


# transaction=True: each launch's transaction is a real one, committed or rolled back as in production.
@pytest.mark.django_db(transaction=True)
def test_a_launch_killed_after_its_create_reached_prolific_leaves_one_draft_after_the_relaunch(survey, api):
    account = ProlificAccount(api)
    account.kill_during_next_create = True
    with pytest.raises(WorkerKilled):
        services.survey_launch(survey=survey)
    row = ProlificStudy.objects.get(survey=survey)
    # Prolific has the draft; RateLab recorded nothing about it (no id, no lost answer).
    assert len(account.drafts_of(survey)) == 1
    assert (row.study_id, row.draft_lost_at) == ("", None)

    services.survey_launch(survey=survey)

    assert len(account.drafts_of(survey)) == 1, "the relaunch made a second draft"
    assert (account.posts, account.listed.call_count, account.published.call_count) == (1, 1, 1)
    row.refresh_from_db()
    assert (row.study_id, row.status) == (account.studies[0]["id"], "ACTIVE")
    assert Survey.objects.get(pk=survey.pk).status == Survey.Status.LIVE


@pytest.mark.django_db(transaction=True)
def test_a_launch_killed_before_its_create_reached_prolific_is_followed_by_one_create(survey, api, monkeypatch):
    # Killed after counting itself and before sending: Prolific lists nothing, so the relaunch creates.
    account = ProlificAccount(api)

    def killed_before_sending(self, survey, study):
        raise WorkerKilled

    with monkeypatch.context() as patched:
        patched.setattr("annotation.crowd.prolific.provider.ProlificProvider.study_body", killed_before_sending)
        with pytest.raises(WorkerKilled):
            services.survey_launch(survey=survey)
    assert account.studies == []

    services.survey_launch(survey=survey)

    assert len(account.drafts_of(survey)) == 1
    assert (account.posts, account.listed.call_count) == (1, 1)
    assert ProlificStudy.objects.get(survey=survey).study_id == account.studies[0]["id"]


@pytest.mark.django_db(transaction=True)
def test_the_first_launch_of_a_survey_creates_its_draft_without_listing_the_account(survey, api):
    account = ProlificAccount(api)
    services.survey_launch(survey=survey)
    assert (account.posts, account.listed.call_count, account.published.call_count) == (1, 0, 1)
    # Launching a live survey again, or publishing it again, asks Prolific for nothing more.
    services.survey_launch(survey=survey)
    assert (account.posts, account.listed.call_count, account.published.call_count) == (1, 0, 1)
    assert ProlificStudy.objects.get(survey=survey).draft_attempts == 1


@pytest.mark.django_db(transaction=True)
def test_a_launch_after_a_refused_create_looks_for_a_draft_first_and_creates_one(survey, api):
    # A refusal (400) made no draft, but the relaunch cannot tell it from a death mid-request by
    # the count alone: it lists once, finds nothing, and creates.
    account = ProlificAccount(api)
    account.refuse_next_create = True
    with pytest.raises(ProviderError, match="external_study_url is not reachable"):
        services.survey_launch(survey=survey)
    services.survey_launch(survey=survey)
    assert len(account.drafts_of(survey)) == 1
    assert (account.posts, account.listed.call_count) == (2, 1)


@pytest.mark.django_db
def test_the_upgrade_counts_an_attempt_for_a_tagged_study_without_a_draft_id(researcher):
    # Before draft_attempts existed, a tagged row without an id may have had its POST sent.
    migration = importlib.import_module("annotation.migrations.0019_prolific_draft_attempts")
    _tagged, recorded, untagged = (make_prolific_survey(researcher, name=name) for name in ("a", "b", "c"))
    ProlificStudy.objects.filter(survey=recorded).update(study_id="60aca280709ee40ec37d4885")
    ProlificStudy.objects.filter(survey=untagged).update(draft_tag="")
    migration.count_earlier_attempts(django_apps, None)
    attempts = dict(ProlificStudy.objects.values_list("survey__name", "draft_attempts"))
    assert attempts == {"a": 1, "b": 0, "c": 0}
