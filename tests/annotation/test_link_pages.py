"""The researcher's page of a link-and-completion-code survey: reachable from the survey page,
for its owner only; it shows the URL to give the platform and the way back, and confirms or
unconfirms participants (only confirmed work counts)."""

import pytest
from django.test import Client

from annotation.crowd.link_platform import platform_settings
from annotation.models import LinkParticipant, LinkPlatform, Survey
from annotation.quality.selectors import accepted_ratings
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import do_task

COMPLETE = "https://connect.example.org/complete?code={code}"


@pytest.fixture
def survey(researcher, settings):
    settings.PUBLIC_BASE_URL = "https://ratelab.example.org"
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    return survey


def page(client, survey):
    return client.get(f"/surveys/{survey.pk}/link/")


def act(client, survey, **data):
    return client.post(f"/surveys/{survey.pk}/link/action/", data, follow=True)


def participate(survey, participant):
    browser = Client()
    do_task(browser, browser.post(f"/l/{survey.token}/", {"workerId": participant}))


def test_the_survey_page_links_to_the_link_platform_page(researcher_client, survey):
    detail = researcher_client.get(f"/surveys/{survey.pk}/").content.decode()
    assert f'href="/surveys/{survey.pk}/link/"' in detail


def test_the_page_shows_the_url_with_the_configured_parameter_and_the_completion_url(researcher_client, survey):
    text = page(researcher_client, survey).content.decode()
    code = LinkPlatform.objects.get(survey=survey).completion_code
    assert f"https://ratelab.example.org/l/{survey.token}/?workerId=" in text
    assert f"https://connect.example.org/complete?code={code}" in text


def test_the_page_is_for_the_owner_and_staff_may_read_but_not_confirm(
    client, survey, other_researcher, django_user_model
):
    participate(survey, "conn-0001")
    assert page(client, survey).status_code == 302  # to the login page
    client.force_login(other_researcher)
    assert page(client, survey).status_code == 404
    assert (
        client.post(f"/surveys/{survey.pk}/link/action/", {"action": "confirm", "ids": "conn-0001"}).status_code == 404
    )
    staff = django_user_model.objects.create_user("staffer", password="x", is_staff=True)
    client.force_login(staff)
    assert page(client, survey).status_code == 200
    assert (
        client.post(f"/surveys/{survey.pk}/link/action/", {"action": "confirm", "ids": "conn-0001"}).status_code == 404
    )
    assert not LinkParticipant.objects.get(participant_id="conn-0001").confirmed


def test_pasted_ids_confirm_participants_and_unknown_ids_are_named(researcher_client, survey):
    participate(survey, "conn-0001")
    participate(survey, "conn-0002")
    assert not accepted_ratings(dataset=survey.dataset, surveys=[survey]).exists()
    text = act(researcher_client, survey, action="confirm", ids="conn-0001\nnever-here").content.decode()
    assert "Confirmed 1 participant(s)." in text and "never-here" in text
    assert set(
        accepted_ratings(dataset=survey.dataset, surveys=[survey]).values_list("annotator__worker_id", flat=True)
    ) == {"conn-0001"}
    act(researcher_client, survey, action="unconfirm", participant="conn-0001")
    assert not LinkParticipant.objects.get(participant_id="conn-0001").confirmed
    act(researcher_client, survey, action="confirm", participant="conn-0002")
    assert LinkParticipant.objects.get(participant_id="conn-0002").confirmed


def test_settings_change_until_someone_starts_and_bad_values_are_refused(researcher_client, survey):
    text = act(
        researcher_client, survey, action="settings", participant_param="id", completion_url="http://x.org/?c={code}"
    )
    assert "must be an https:// address" in text.content.decode()
    act(
        researcher_client,
        survey,
        action="settings",
        participant_param="PID",
        completion_url="https://sona.example.edu/done?c={code}",
    )
    row = LinkPlatform.objects.get(survey=survey)
    assert (row.participant_param, row.completion_url) == ("PID", "https://sona.example.edu/done?c={code}")
    browser = Client()
    browser.post(f"/l/{survey.token}/", {"PID": "sona-77"})
    refused = act(researcher_client, survey, action="settings", participant_param="x", completion_url=COMPLETE)
    assert "can no longer change" in refused.content.decode()
    assert LinkPlatform.objects.get(survey=survey).participant_param == "PID"


def test_a_refused_completion_url_is_shown_back_beside_its_error_and_nothing_is_saved(researcher_client, survey):
    typed = "https://connect.example.org/complete?code="
    refused = researcher_client.post(
        f"/surveys/{survey.pk}/link/action/",
        {"action": "settings", "participant_param": "PROLIFIC_PID", "completion_url": typed},
    )
    page = refused.content.decode()
    assert refused.status_code == 200  # shown again as the page itself (F32), not as an HTTP error
    assert 'id="settings-error">Not saved: The completion URL' in page and "must contain {code} once" in page
    # What was typed stays in the fields, so only the mistake needs correcting.
    assert f'name="completion_url" type="url" value="{typed}"' in page
    assert 'name="participant_param" value="PROLIFIC_PID"' in page
    row = LinkPlatform.objects.get(survey=survey)
    assert (row.participant_param, row.completion_url) == ("workerId", COMPLETE)
