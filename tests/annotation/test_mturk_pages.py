"""The researcher's MTurk page: cost, balance, HITs, assignment statuses and action buttons."""

import pytest
from django.core.checks import Error
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Survey
from annotation.models.mturk import MTurkBonus, MTurkSettings
from annotation.services import mturk as services
from annotation.services.runtime.checks import check_mturk_needs_public_url
from tests.annotation.mturk_helpers import (
    expect_create_hit,
    expect_get_assignment,
    expect_prelude,
    hit_id,
    make_survey,
    publish_all,
)
from tests.conftest import PASSWORD


@pytest.fixture
def survey(stubber, researcher):
    survey = make_survey(researcher, n_hits=2)
    publish_all(stubber, survey)
    hit = survey.hits.get(position=0)
    services.mturk_assignment_open(hit=hit, assignment_id="3ASGPAGE", worker_id="AWORKERPAGE")
    return survey


def page_url(survey):
    return reverse("annotation:mturk_survey", args=[survey.pk])


def test_page_requires_login(client, survey):
    response = client.get(page_url(survey))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_owner_sees_cost_estimate_hits_and_assignment_status(client, researcher, survey):
    client.force_login(researcher)
    html = client.get(page_url(survey)).content.decode()
    # 2 HITs x 3 assignments x $0.50 = $3.00, fees 20% = $0.60
    assert "$3.00" in html and "$0.60" in html and "$3.60" in html
    assert "3HIT00000000000000000000000000" in html
    assert "https://workersandbox.mturk.com/projects/3GROUP000000000000000000000000/tasks" in html
    assert "3ASGPAGE" in html and "AWORKERPAGE" in html
    assert "not synced" in html
    assert "sandbox (no real money)" in html


def test_owner_sees_the_account_balance_on_request(client, researcher, survey, stubber):
    stubber.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    client.force_login(researcher)
    assert "$10000.00" in client.get(page_url(survey), {"balance": 1}).content.decode()


def test_other_researchers_get_not_found(client, other_researcher, outsider, survey):
    for user in (other_researcher, outsider):
        client.force_login(user)
        assert client.get(page_url(survey)).status_code == 404
        response = client.post(
            reverse("annotation:mturk_action", args=[survey.pk]), {"action": "expire", "confirm": "yes"}
        )
        assert response.status_code == 404


def test_approve_button_approves_on_mturk(client, researcher, survey, stubber):
    slot = Assignment.objects.get(external_id="3ASGPAGE")
    # Not synced yet: MTurk is asked first, and confirms this assignment for this HIT and worker.
    expect_get_assignment(stubber, "3ASGPAGE", hit=hit_id(0), worker="AWORKERPAGE")
    stubber.add_response("approve_assignment", {}, {"AssignmentId": "3ASGPAGE"})
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:mturk_action", args=[survey.pk]), {"action": "approve", "assignment_id": "3ASGPAGE"}
    )
    assert response.status_code == 302
    slot.refresh_from_db()
    assert slot.external_status == "Approved"


def test_reject_button_without_reason_shows_an_error_and_calls_nothing(client, researcher, survey):
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:mturk_action", args=[survey.pk]),
        {"action": "reject", "assignment_id": "3ASGPAGE", "reason": "", "confirm": "yes"},
        follow=True,
    )
    assert "A rejection needs a reason" in response.content.decode()
    assert Assignment.objects.get(external_id="3ASGPAGE").external_status == ""


def test_actions_need_the_csrf_token(researcher, survey):
    strict = Client(enforce_csrf_checks=True)
    assert strict.login(username=researcher.username, password=PASSWORD)
    response = strict.post(reverse("annotation:mturk_action", args=[survey.pk]), {"action": "expire"})
    assert response.status_code == 403


def test_publish_button_queues_the_task_after_commit(client, researcher, stubber, django_capture_on_commit_callbacks):
    survey = make_survey(researcher, n_hits=1, name="fresh")
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("annotation:mturk_action", args=[survey.pk]), {"action": "publish"})
    assert response.status_code == 302
    assert len(callbacks) == 1
    assert survey.hits.filter(mturk__isnull=False).count() == 0  # nothing is sent before the commit

    expect_prelude(stubber, survey)
    expect_create_hit(stubber, survey, survey.hits.get(), 0)
    callbacks[0]()
    assert survey.hits.get().external_id == "3HIT00000000000000000000000000"


def test_settings_form_saves_qualification_settings(client, researcher, survey):
    client.force_login(researcher)
    row = MTurkSettings.objects.get(survey=survey)
    data = {
        "action": "settings",
        "title": "Rate chat replies",
        "description": row.description,
        "keywords": row.keywords,
        "auto_approval_delay_seconds": 3600,
        "lifetime_seconds": 86400,
        "frame_height": 900,
        "locales": "US, GB",
        "min_approval_rate": 98,
        "min_approved_hits": 1000,
        "use_exclusion_qualification": "on",
    }
    client.post(reverse("annotation:mturk_action", args=[survey.pk]), data)
    row.refresh_from_db()
    assert (row.title, row.min_approval_rate, row.locale_list) == ("Rate chat replies", 98, ["US", "GB"])


def test_system_check_requires_https_public_base_url_when_a_survey_uses_mturk(settings, researcher):
    settings.PUBLIC_BASE_URL = ""
    assert check_mturk_needs_public_url(None, databases=["default"]) == []
    make_survey(researcher, n_hits=1)
    for bad in ("", "http://ratelab.example.org"):
        settings.PUBLIC_BASE_URL = bad
        errors = check_mturk_needs_public_url(None, databases=["default"])
        assert [(type(e), e.id) for e in errors] == [(Error, "ratelab.E001")]
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    assert check_mturk_needs_public_url(None, databases=["default"]) == []
    assert Survey.objects.filter(provider="mturk").count() == 1


@pytest.mark.parametrize(
    "data",
    [
        {"action": "expire"},
        {"action": "reject", "assignment_id": "3ASGPAGE", "reason": "Answered at random"},
        {"action": "block", "worker_id": "AWORKERPAGE", "reason": "Answered at random"},
    ],
)
def test_irreversible_mturk_actions_ask_first_and_call_nothing_until_confirmed(
    client, researcher, survey, stubber, data
):
    """Stubber has no responses queued: any MTurk call on the first POST would raise."""
    client.force_login(researcher)
    page = client.post(reverse("annotation:mturk_action", args=[survey.pk]), data)
    html = page.content.decode()
    assert page.status_code == 200 and 'name="confirm" value="yes"' in html and "cannot be undone" in html
    for name, value in data.items():
        assert f'name="{name}" value="{value}"' in html  # the confirmed POST carries what was asked
    stubber.assert_no_pending_responses()
    assert Assignment.objects.get(external_id="3ASGPAGE").external_status == ""


@pytest.mark.parametrize(
    ("form", "what"),
    [
        ({"action": "extend", "hours": "inf"}, "Hours"),
        ({"action": "extend", "hours": "nan"}, "Hours"),
        ({"action": "bonus", "assignment_id": "3ASGPAGE", "amount_dollars": "inf", "reason": "thanks"}, "The bonus"),
        ({"action": "bonus", "assignment_id": "3ASGPAGE", "amount_dollars": "1e400", "reason": "thanks"}, "The bonus"),
    ],
)
def test_an_infinite_or_nan_number_on_the_page_is_refused_by_name_and_calls_nothing(
    client, researcher, survey, form, what
):
    # stubber (through the survey fixture) fails the test on any MTurk call it was not told of.
    client.force_login(researcher)
    response = client.post(
        reverse("annotation:mturk_action", args=[survey.pk]), {**form, "confirm": "yes"}, follow=True
    )
    assert response.status_code == 200
    assert f"{what} must be a number such as 2.50" in response.content.decode().replace("&#x27;", "'")


@pytest.mark.parametrize("hours", ["1e8", "-24", "0"])
def test_hours_to_extend_by_out_of_range_are_refused_in_words_and_call_nothing(client, researcher, survey, hours):
    # 1e8 hours passed the finite-number check and failed in datetime arithmetic (a 500); zero or
    # negative hours "extended" every HIT into the past: an expiry without the expiry's confirmation.
    client.force_login(researcher)
    form = {"action": "extend", "hours": hours, "confirm": "yes"}
    response = client.post(reverse("annotation:mturk_action", args=[survey.pk]), form, follow=True)
    assert response.status_code == 200
    assert "Hours to extend by must be more than 0 and at most 8760 (a year)" in response.content.decode()


def test_a_bonus_too_large_to_store_is_refused_in_words_and_calls_nothing(client, researcher, survey):
    # finite, so it passed the number check, and then overflowed PostgreSQL's integer column (a 500)
    client.force_login(researcher)
    form = {"action": "bonus", "assignment_id": "3ASGPAGE", "amount_dollars": "50000000", "reason": "thanks"}
    url = reverse("annotation:mturk_action", args=[survey.pk])
    response = client.post(url, {**form, "confirm": "yes"}, follow=True)
    assert response.status_code == 200 and "The bonus must be at most 10000" in response.content.decode()
    assert not MTurkBonus.objects.exists()
