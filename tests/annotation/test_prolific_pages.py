"""The researcher's Prolific page: own surveys only, pay check with figures, review buttons."""

import re

import httpx
import pytest
from django.test import Client

from annotation.crowd.base import ProviderError
from annotation.models import Assignment, ProlificBonus, ProlificStudy, ProlificSubmission
from tests.annotation.prolific_helpers import (
    STUDY_ID,
    confirmed_assignment,
    do_task,
    entry,
    make_prolific_survey,
    pid,
    provider,
    publish,
    session,
    submissions_answer,
)


@pytest.fixture
def survey(researcher, api):
    return make_prolific_survey(researcher, reward_cents=150, minutes=10)


def page(client, survey):
    return client.get(f"/surveys/{survey.pk}/prolific/")


def test_the_page_is_only_for_the_surveys_owner(client, survey, other_researcher):
    assert page(client, survey).status_code == 302  # to the login page
    client.force_login(other_researcher)
    assert page(client, survey).status_code == 404


def test_a_reward_under_the_floor_is_shown_with_its_figures_and_publishing_is_refused(researcher_client, survey, api):
    response = researcher_client.post(
        f"/surveys/{survey.pk}/prolific/action/",
        {"action": "settings", "reward": "0.50", "minutes": "10", "currency": "GBP"},
    )
    assert response.status_code == 302
    text = page(researcher_client, survey).content.decode()
    assert "£0.50 for 10 minutes" in text and "£3.00 an hour" in text and "Publishing is refused" in text
    survey.status = survey.Status.DRAFT
    survey.save()
    created = api.post("studies/")
    refused = researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", {"action": "publish"}, follow=True)
    assert created.call_count == 0
    assert "pays £3.00 an hour, under Prolific" in refused.content.decode().replace("&#x27;", "'")
    survey.refresh_from_db()
    assert survey.status == survey.Status.DRAFT


def test_publishing_from_the_page_creates_and_publishes_the_study(researcher_client, survey, api):
    survey.status = survey.Status.DRAFT
    survey.save()
    api.post("studies/").mock(return_value=httpx.Response(201, json={"id": STUDY_ID, "status": "UNPUBLISHED"}))
    api.post(f"studies/{STUDY_ID}/transition/").mock(
        return_value=httpx.Response(200, json={"id": STUDY_ID, "status": "ACTIVE"})
    )
    researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", {"action": "publish"})
    assert ProlificStudy.objects.get(survey=survey).study_id == STUDY_ID


def test_the_same_bonus_form_sent_twice_pays_once(researcher_client, client, survey, api):
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-7"}))
    paid = api.post("bulk-bonus-payments/bulk-7/pay/").mock(return_value=httpx.Response(202, json={}))
    text = page(researcher_client, survey).content.decode()
    assert "confirmed by Prolific" in text and pid(1) in text
    row = ProlificStudy.objects.get(survey=survey).submissions.get()
    form = {"action": "bonus", "submission": row.pk, "amount": "0.40", "bonus_key": "key-from-one-page"}
    researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form)
    researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form)
    assert paid.call_count == 1 and ProlificBonus.objects.get().amount_cents == 40
    assert Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 1


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400"])
def test_an_infinite_reward_or_bonus_is_refused_by_name_and_changes_nothing(researcher_client, survey, api, value):
    url = f"/surveys/{survey.pk}/prolific/action/"
    form = {"action": "settings", "reward": value, "minutes": "10", "currency": "GBP"}
    response = researcher_client.post(url, form, follow=True)
    assert response.status_code == 200 and "The reward must be a number such as 2.50" in response.content.decode()
    assert ProlificStudy.objects.get(survey=survey).reward_cents == 150
    response = researcher_client.post(url, {"action": "bonus", "submission": "1", "amount": value}, follow=True)
    assert response.status_code == 200 and "The bonus must be a number such as 2.50" in response.content.decode()
    assert not ProlificBonus.objects.exists()


def test_adding_places_before_the_study_is_on_prolific_says_so_and_calls_nothing(researcher_client, survey, api):
    ProlificStudy.objects.filter(survey=survey).update(study_id="")
    patched = api.patch(url__regex=r"studies/.*").mock(return_value=httpx.Response(200, json={}))
    url = f"/surveys/{survey.pk}/prolific/action/"
    response = researcher_client.post(url, {"action": "places", "places": "40"}, follow=True)
    assert "has no Prolific study yet" in response.content.decode() and patched.call_count == 0


@pytest.mark.parametrize("action", ["approve", "reject", "bonus", "block"])
def test_a_button_naming_no_submission_says_so_in_words(researcher_client, survey, api, action):
    url = f"/surveys/{survey.pk}/prolific/action/"
    page = researcher_client.post(url, {"action": action, "submission": "", "amount": "0.5"}, follow=True)
    text = page.content.decode()
    assert page.status_code == 200 and "Choose a participant" in text and "expected a number" not in text


@pytest.mark.parametrize("places", ["", "forty", "4.5", "-3"])
def test_places_that_are_no_whole_number_are_refused_in_words(researcher_client, survey, api, places):
    patched = api.patch(url__regex=r"studies/.*").mock(return_value=httpx.Response(200, json={}))
    url = f"/surveys/{survey.pk}/prolific/action/"
    text = researcher_client.post(url, {"action": "places", "places": places}, follow=True).content.decode()
    assert "Places must be a whole number" in text and "invalid literal" not in text and patched.call_count == 0


@pytest.mark.parametrize(
    "form",
    [
        {"action": "settings", "reward": "50000000", "minutes": "10", "currency": "GBP"},
        {"action": "settings", "reward": "2.50", "minutes": "9999999999", "currency": "GBP"},
    ],
)
def test_a_reward_or_time_too_large_to_store_is_refused_in_words_and_changes_nothing(
    researcher_client, survey, api, form
):
    # finite, so they passed the number check, and then overflowed PostgreSQL's integer column (a 500)
    url = f"/surveys/{survey.pk}/prolific/action/"
    response = researcher_client.post(url, form, follow=True)
    assert response.status_code == 200 and "must be at most" in response.content.decode()
    assert ProlificStudy.objects.get(survey=survey).reward_cents == 150
    response = researcher_client.post(url, {"action": "bonus", "submission": "1", "amount": "50000000"}, follow=True)
    assert response.status_code == 200 and "The bonus must be at most 10000" in response.content.decode()
    assert not ProlificBonus.objects.exists()


def test_a_bonus_form_sent_again_with_another_amount_says_what_it_paid_and_pays_nothing_more(
    researcher_client, client, survey, api
):
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-7"}))
    paid = api.post("bulk-bonus-payments/bulk-7/pay/").mock(return_value=httpx.Response(202, json={}))
    row = ProlificStudy.objects.get(survey=survey).submissions.get()
    form = {"action": "bonus", "submission": row.pk, "amount": "0.40", "bonus_key": "key-from-one-page"}
    researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form)
    again = researcher_client.post(
        f"/surveys/{survey.pk}/prolific/action/", {**form, "amount": "0.20"}, follow=True
    ).content.decode()
    assert "This form already paid" in again and "£0.40" in again and "nothing more was sent" in again
    assert paid.call_count == 1 and ProlificBonus.objects.get().amount_cents == 40


def bonus_form_from_page(researcher_client, survey, row, amount):
    """The bonus form as a freshly loaded page renders it: its page key, the row, an amount."""
    key = re.search(r'name="bonus_key" value="([^"]+)"', page(researcher_client, survey).content.decode()).group(1)
    return {"action": "bonus", "submission": row.pk, "amount": amount, "bonus_key": key}


def test_a_second_bonus_of_the_same_amount_from_a_fresh_page_is_paid(researcher_client, client, survey, api):
    # The researcher deliberately pays the same participant the same amount twice (two rounds of
    # good work): each freshly loaded page's form is a new bonus, and each is paid.
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    api.post("submissions/bonus-payments/").mock(
        side_effect=[httpx.Response(201, json={"id": "bulk-7"}), httpx.Response(201, json={"id": "bulk-8"})]
    )
    first = api.post("bulk-bonus-payments/bulk-7/pay/").mock(return_value=httpx.Response(202, json={}))
    second = api.post("bulk-bonus-payments/bulk-8/pay/").mock(return_value=httpx.Response(202, json={}))
    row = ProlificStudy.objects.get(survey=survey).submissions.get()
    for _ in range(2):
        form = bonus_form_from_page(researcher_client, survey, row, "0.40")
        response = researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form, follow=True)
        assert f"Bonus: {pid(1)}." in response.content.decode()
    assert first.call_count == 1 and second.call_count == 1
    assert ProlificBonus.objects.filter(paid_at__isnull=False, amount_cents=40).count() == 2


def test_a_bonus_form_without_its_page_key_is_refused_in_words_and_pays_nothing(researcher_client, client, survey, api):
    # Without the key a retry could not be told from a new bonus: one shared fallback key would
    # also refuse every later bonus to this participant.
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    created = api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-7"}))
    row = ProlificStudy.objects.get(survey=survey).submissions.get()
    for key in ("", "x", "<script>"):
        form = {"action": "bonus", "submission": row.pk, "amount": "0.40", "bonus_key": key}
        text = researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form, follow=True).content.decode()
        assert "This bonus form has no page key: reload the page" in text and "nothing was paid" in text
    assert created.call_count == 0 and not ProlificBonus.objects.exists()


def test_the_provider_pays_no_bonus_without_a_key_naming_its_intent(client, survey, api):
    publish(api, survey)
    slot = confirmed_assignment(client, survey, api)
    created = api.post("submissions/bonus-payments/").mock(return_value=httpx.Response(201, json={"id": "bulk-7"}))
    with pytest.raises(ProviderError, match="needs the key"):
        provider().bonus(assignment=slot, amount_cents=40, reason="", key="")
    assert created.call_count == 0 and not ProlificBonus.objects.exists()


def test_a_sync_stores_each_completion_code_and_the_page_flags_one_not_of_this_study(researcher_client, survey, api):
    # Prolific lists the code each participant came back with (`study_code`, "NOCODE" for none);
    # a code typed by hand may be any code, so the page says which are not the study's.
    publish(api, survey)
    study = ProlificStudy.objects.get(survey=survey)
    codes = {1: study.completed_code, 2: study.failed_check_code, 3: "C1ABCDEF", 4: "NOCODE"}
    for n in codes:
        participant = Client()  # each in their own browser
        do_task(participant, entry(participant, survey, participant=pid(n), session_id=session(n)))
    listed = submissions_answer(*[(session(n), pid(n), "AWAITING REVIEW") for n in codes])
    for item, code in zip(listed["results"], codes.values(), strict=True):
        item["study_code"] = code
    api.get(f"studies/{STUDY_ID}/submissions/").mock(return_value=httpx.Response(200, json=listed))
    provider().sync(survey=survey)
    stored = dict(ProlificSubmission.objects.values_list("participant_id", "study_code"))
    assert stored == {pid(n): code for n, code in codes.items()}
    text = page(researcher_client, survey).content.decode()
    assert "Completion code" in text
    assert f"{study.completed_code} (completed)" in text
    assert f"{study.failed_check_code} (failed an attention check)" in text
    assert "<strong>Check:</strong> C1ABCDEF: not one of this study&#x27;s codes" in text
    assert "no code: submitted on Prolific without one" in text


def test_a_code_with_markup_from_prolific_is_shown_as_text(researcher_client, client, survey, api):
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    ProlificSubmission.objects.update(study_code="<b>X</b>")
    text = page(researcher_client, survey).content.decode()
    assert "&lt;b&gt;X&lt;/b&gt;: not one of this study" in text and "<b>X</b>" not in text


def test_a_page_key_with_a_line_break_after_it_is_no_second_key(researcher_client, client, survey, api):
    # `$` alone also matches before a final line break: "key\n" passed as a key of its own, so the
    # same form sent again with one appended named a second bonus and paid again.
    publish(api, survey)
    confirmed_assignment(client, survey, api)
    api.post("submissions/bonus-payments/").mock(
        side_effect=[httpx.Response(201, json={"id": "bulk-7"}), httpx.Response(201, json={"id": "bulk-8"})]
    )
    first = api.post("bulk-bonus-payments/bulk-7/pay/").mock(return_value=httpx.Response(202, json={}))
    second = api.post("bulk-bonus-payments/bulk-8/pay/").mock(return_value=httpx.Response(202, json={}))
    row = ProlificStudy.objects.get(survey=survey).submissions.get()
    form = bonus_form_from_page(researcher_client, survey, row, "0.40")
    researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", form)
    again = {**form, "bonus_key": form["bonus_key"] + "\n"}
    text = researcher_client.post(f"/surveys/{survey.pk}/prolific/action/", again, follow=True).content.decode()
    assert "nothing was paid" in text
    assert first.call_count == 1 and second.call_count == 0 and ProlificBonus.objects.count() == 1
