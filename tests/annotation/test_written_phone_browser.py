"""The written-replies review on a phone: each reply is a card with its buttons on screen (the table
put the reply and Accept / Reject to the right of a sideways scroll)."""

import pytest

from annotation import services
from annotation.models import WrittenResponse
from tests.annotation.studies_helpers import dataset_records
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def _written_survey(researcher):
    dataset = load_dataset_records(records=dataset_records(2), name="cards", owner=researcher)
    survey = services.survey_create(
        dataset=dataset, name="cards-write", owner=researcher, task_type="write", write_system_name="people"
    )
    survey = services.survey_launch(survey=survey)
    assignment = services.assignment_claim(survey=survey, worker_id="w1")
    answers = {
        item.pk: {"scores": {}, "seconds": 4.0, "text": "A reply long enough to need more than one line on a phone."}
        for item in services.assignment_items(assignment=assignment)
    }
    services.assignment_submit(assignment=assignment, answers=answers)
    return survey


def test_each_written_reply_is_a_card_with_its_buttons_on_a_phone_screen(live_server, browser, researcher):
    survey = _written_survey(researcher)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/surveys/{survey.pk}/written/")
    accept = page.get_by_role("button", name="Accept").first
    box = accept.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"], "Accept is on screen, not behind a sideways scroll"
    label = page.evaluate("getComputedStyle(document.querySelector('td[data-label=Reply]'), '::before').content")
    assert label == '"Reply"', "each line of the card says what it is"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_reply_of_megabytes_fits_the_phone_on_the_review_page_and_read_whole(live_server, browser, researcher):
    # One run of text of some megabytes is not wrapped by Chromium: the page would be millions of
    # pixels wide. The review page shows the reply's start; the whole reply comes in blocks.
    survey = _written_survey(researcher)
    WrittenResponse.objects.filter(assignment__hit__survey=survey).update(text="wordwordword " * 400_000)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/surveys/{survey.pk}/written/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.get_by_role("link", name="Read the whole reply (5200000 characters)").first.click()
    page.wait_for_url("**/written/*/")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
