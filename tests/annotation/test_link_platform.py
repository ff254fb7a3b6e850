"""A survey on a platform that works by link and completion code (no API): entry, way back, and
work that counts only once the researcher confirms the ids the platform lists as completed."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.crowd.base import ProviderError
from annotation.crowd.link_platform import LinkPlatformProvider, platform_settings
from annotation.models import Assignment, LinkParticipant, LinkPlatform, Survey
from annotation.quality.selectors import accepted_ratings
from tests.annotation.mturk_helpers import make_survey
from tests.annotation.prolific_helpers import do_task
from tests.annotation.studies_helpers import survey_form_fields

COMPLETE = "https://connect.example.org/complete?code={code}"


@pytest.fixture
def survey(researcher):
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    return survey


def start(client, survey, participant, method="post"):
    url = f"/l/{survey.token}/"
    return (
        client.post(url, {"workerId": participant}) if method == "post" else client.get(url, {"workerId": participant})
    )


def test_the_entry_page_reads_the_named_parameter_and_claims_only_on_post(client, survey):
    page = start(client, survey, "W1", method="get")
    assert page.status_code == 200 and b'name="workerId" value="W1"' in page.content
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()
    assert start(client, survey, "W1")["Location"].startswith("/a/")
    assert Assignment.objects.get(status=Assignment.Status.ACTIVE).annotator.worker_id == "W1"


def test_a_missing_parameter_is_named(client, survey):
    refused = client.get(f"/l/{survey.token}/")
    assert refused.status_code == 400 and b"malformed workerId" in refused.content


def test_the_participant_goes_back_through_the_completion_url_with_the_code(client, survey):
    do_task(client, start(client, survey, "W1"))
    code = LinkPlatform.objects.get(survey=survey).completion_code
    finish = client.get(f"/l/{survey.token}/finish/")
    # Shown on RateLab's own page, with the way back carrying it (F13): not only in a redirect.
    assert finish.status_code == 200 and f'id="completion-code">{code}<' in finish.content.decode()
    assert f'href="https://connect.example.org/complete?code={code}"' in finish.content.decode()


def test_work_counts_and_can_be_reviewed_only_once_confirmed(client, survey, tmp_path):
    do_task(client, start(client, survey, "W1"))
    slot = Assignment.objects.get(status=Assignment.Status.SUBMITTED)
    assert accepted_ratings(dataset=survey.dataset, surveys=[survey], apply_exclusions=False).count() == 0
    with pytest.raises(ProviderError, match="not confirmed"):
        LinkPlatformProvider().approve(assignment=slot)
    ids = tmp_path / "completed.txt"
    ids.write_text("W1\nW9\n", encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command("link_confirm", "--survey", "on-connect", str(ids), stdout=out, stderr=err)
    assert out.getvalue().strip() == "confirmed=1 unknown=1" and "W9" in err.getvalue()
    assert accepted_ratings(dataset=survey.dataset, surveys=[survey], apply_exclusions=False).count() > 0
    LinkPlatformProvider().approve(assignment=slot)
    slot.refresh_from_db()
    assert slot.status == Assignment.Status.APPROVED and LinkParticipant.objects.get().confirmed


def test_a_completion_url_must_be_https_and_hold_the_code_once(researcher, survey):
    with pytest.raises(ProviderError, match="https"):
        platform_settings(survey, completion_url="http://connect.example.org/done?c={code}")
    with pytest.raises(ProviderError, match="contain"):
        platform_settings(survey, completion_url="https://connect.example.org/done")


def test_create_survey_for_a_link_platform_prints_the_entry_url(researcher, survey):
    out = StringIO()
    call_command(
        "create_survey", "--dataset", "on-connect-data", "--name", "wave-2", "--provider", "link",
        "--completion-url", COMPLETE, "--participant-param", "workerId", "--draft", stdout=out, stderr=StringIO(),
    )  # fmt: skip
    wave = Survey.objects.get(name="wave-2")
    assert out.getvalue().strip().endswith(f"/l/{wave.token}/?workerId=<the participant's id>")
    assert LinkPlatform.objects.get(survey=wave).completion_url == COMPLETE
    with pytest.raises(CommandError, match="must contain"):
        call_command(
            "create_survey", "--dataset", "on-connect-data", "--name", "wave-3", "--provider", "link",
            "--completion-url", "https://connect.example.org/", stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip
    assert not Survey.objects.filter(name="wave-3").exists()


def test_another_browser_naming_a_started_participants_id_gets_neither_their_task_nor_their_cookie(client, survey):
    own = start(client, survey, "W1")
    stranger = Client()
    refused = start(stranger, survey, "W1")
    assert refused.status_code == 409 and b"already started this study in another browser" in refused.content
    assert not [name for name in refused.cookies if name.startswith("ratelab_worker")]
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1
    assert start(client, survey, "W1")["Location"] == own["Location"]  # the participant's own browser goes on


def test_new_participant_ids_from_one_address_are_capped_per_hour_and_a_started_one_goes_on(survey):
    # An id is only a claim: one person with the link could take every open slot with made-up ids.
    Survey.objects.filter(pk=survey.pk).update(new_annotators_per_address_hour=2)
    here, elsewhere = Client(REMOTE_ADDR="203.0.113.7"), Client(REMOTE_ADDR="198.51.100.9")
    assert start(here, survey, "W1").status_code == 302
    assert start(Client(REMOTE_ADDR="203.0.113.7"), survey, "W2").status_code == 302
    refused = start(Client(REMOTE_ADDR="203.0.113.7"), survey, "W3")
    assert refused.status_code == 429 and b"Too many new participants have joined this study" in refused.content
    assert not LinkParticipant.objects.filter(participant_id="W3").exists()
    assert start(here, survey, "W1").status_code == 302  # W1's own browser goes on
    assert start(elsewhere, survey, "W3").status_code == 302
    assert LinkParticipant.objects.get(participant_id="W3").address == "198.51.100.9"


def test_behind_a_proxy_set_for_login_throttling_participants_are_capped_by_their_own_address(survey, settings):
    # TRUSTED_PROXY_COUNT (docs/settings.md: login throttling) is the one proxy setting: the annotator pages
    # read REMOTE_ADDR, the proxy's, for everyone when only it was set, so the second participant
    # anywhere was refused as a newcomer from the first one's address.
    settings.TRUSTED_PROXY_COUNT = 1
    Survey.objects.filter(pk=survey.pk).update(new_annotators_per_address_hour=1)
    proxy = "10.0.0.2"
    first = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.7")
    second = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.9")
    assert start(first, survey, "W1").status_code == 302
    assert start(second, survey, "W2").status_code == 302
    assert dict(LinkParticipant.objects.values_list("participant_id", "address")) == {
        "W1": "203.0.113.7",
        "W2": "198.51.100.9",
    }
    again = start(Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.9"), survey, "W3")
    assert again.status_code == 429


def test_an_id_first_started_by_another_browser_at_the_same_moment_is_refused_too(survey, monkeypatch):
    # The refusal read "already started?" before the transaction that records the id: a browser whose
    # request reached get_or_create just after the participant's own had recorded it was handed their
    # task and cookie. The participant's request is made to land in that window, deterministically.
    from annotation.services import identities
    from annotation.views.crowd import link_entry as link_platform

    owner = Client()
    real_check = identities.newcomer_cap_check

    def participant_lands_meanwhile(**kwargs):
        if not LinkParticipant.objects.filter(participant_id="W1").exists():
            monkeypatch.setattr(link_platform, "newcomer_cap_check", real_check)
            assert start(owner, survey, "W1").status_code == 302
        return real_check(**kwargs)

    monkeypatch.setattr(link_platform, "newcomer_cap_check", participant_lands_meanwhile)
    refused = start(Client(), survey, "W1")
    assert refused.status_code == 409 and b"already started this study in another browser" in refused.content
    assert not [name for name in refused.cookies if name.startswith("ratelab_worker")]
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1


def test_the_survey_form_makes_a_link_platform_survey_that_leads_to_its_link_page(researcher_client, researcher):
    dataset = make_survey(researcher).dataset
    form = survey_form_fields(dataset, name="on-connect", provider="link")
    response = researcher_client.post("/surveys/new/", form)
    survey = Survey.objects.get(name="on-connect")
    assert response.status_code == 302 and survey.provider == Survey.Provider.LINK
    platform = LinkPlatform.objects.get(survey=survey)
    assert platform.participant_param == "participant_id" and platform.completion_url == ""
    detail = researcher_client.get(response["Location"]).content.decode()
    assert f'id="link-page" href="/surveys/{survey.pk}/link/"' in detail
    link_page = researcher_client.get(f"/surveys/{survey.pk}/link/").content.decode()
    assert "not set: participants cannot start until it is" in link_page


def test_the_entry_page_never_shows_participants_the_researchers_name_for_the_survey(client, researcher):
    survey = make_survey(researcher, n_hits=1, assignments=1, name="hred-vs-human-pilot")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    page = start(client, survey, "W1", method="get")
    assert page.status_code == 200
    assert b"hred-vs-human-pilot" not in page.content
    assert b"<title>Rating study \xc2\xb7 RateLab</title>" in page.content
