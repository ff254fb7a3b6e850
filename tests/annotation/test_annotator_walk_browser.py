"""The annotator pages changed for the browser walk of 2026-11-29 (F08-F13) in real headless
Chromium, at a phone's and a desktop's size: nothing wider than the window, and what they say."""

import re

import pytest

from annotation import services
from annotation.crowd.link_platform import platform_settings
from annotation.models import LinkPlatform, Survey
from tests.annotation.browser_pages import DESKTOP, PHONE, answer_all, fits, screenshot_dir
from tests.annotation.pairwise_helpers import make_pairwise_survey
from tests.annotation.studies_helpers import dataset_records, make_survey
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TASK_URL = re.compile(r"/a/[^/]+/$")
SIZES = {"phone": PHONE, "desktop": DESKTOP}


def _context(browser, size):
    if size == "phone":
        return browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    return browser.new_context(viewport=DESKTOP)


def _shot(page, shots, name):
    """The whole page, and the window as it is scrolled now (the part the test looks at)."""
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    page.screenshot(path=str(shots / f"{name}-view.png"))
    assert fits(page), f"{name} is wider than its window"


def _start(page, base, survey):
    page.goto(f"{base}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(TASK_URL)
    return page.url


@pytest.mark.parametrize("size", SIZES)
def test_rating_page_with_a_gold_check_written_with_speakers(live_server, browser, researcher, tmp_path, size):
    records = dataset_records(6)
    for record in records:
        record["context"] = [{"speaker": "A", "text": record["context"][0]}, record["context"][1]]
    dataset = load_dataset_records(records=records, name="walk-study", owner=researcher)
    gold = [{"turns": ["A: Is fire cold?", "B: No, it's hot."], "response_text": "Yes, fire is freezing cold.",
             "accepted_scores": [1, 2]}]  # fmt: skip
    survey = services.survey_create(
        dataset=dataset,
        name="walk-rate",
        owner=researcher,
        contexts_per_hit=3,
        assignments_per_hit=1,
        attention_checks_per_hit=2,
        gold_checks=gold,
    )
    survey = services.survey_launch(survey=survey)
    page = _context(browser, size).new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    assert "You can do up to 2 tasks;" in page.inner_text(".task-facts")
    _shot(page, screenshot_dir(tmp_path), f"start-{size}")
    _start(page, live_server.url, survey)
    assert "Task 1 of at most 2" in page.inner_text(".progress")
    text = page.inner_text("form#task-form")
    assert "Is fire cold?" in text and "A: A:" not in text and "B: B:" not in text
    page.locator(".bubble", has_text="Is fire cold?").first.evaluate("e => e.scrollIntoView()")
    _shot(page, screenshot_dir(tmp_path), f"rating-gold-{size}")


@pytest.mark.parametrize("size", SIZES)
def test_pairwise_page_numbers_the_sides(live_server, browser, researcher, tmp_path, size):
    survey = make_pairwise_survey(researcher, n_contexts=6, assignments_per_hit=1)
    page = _context(browser, size).new_page()
    _start(page, live_server.url, survey)
    first = page.locator(".pair").first
    page.locator(".task-block").first.evaluate("e => e.scrollIntoView()")
    assert first.inner_text().startswith("Reply 1:") and "Reply 2:" in first.inner_text()
    assert page.locator(".pair-choice .value").first.inner_text() == "Reply 1"
    _shot(page, screenshot_dir(tmp_path), f"pairwise-{size}")


@pytest.mark.parametrize("size", SIZES)
def test_link_entry_done_and_completion_code_pages(live_server, browser, researcher, tmp_path, size):
    survey = make_survey(researcher, n_contexts=6, name="on-connect", launch=False, assignments_per_hit=1)
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    # A completion URL that does not resolve, as in the walk: the code must be seen before it.
    platform_settings(
        survey, participant_param="participant_id", completion_url="https://connect.invalid/c?code={code}"
    )
    survey = services.survey_launch(survey=survey)
    code = LinkPlatform.objects.get(survey=survey).completion_code
    shots = screenshot_dir(tmp_path)
    page = _context(browser, size).new_page()
    page.goto(f"{live_server.url}/l/{survey.token}/?participant_id=walkP1")
    assert re.search(r"Each task: \d+ replies to rate, about \d+ minutes?", page.inner_text(".task-facts"))
    _shot(page, shots, f"link-entry-{size}")
    page.click("text=Start")
    page.wait_for_url(TASK_URL)
    answer_all(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    _shot(page, shots, f"done-{size}")
    page.click("#link-finish")
    page.wait_for_url(re.compile(r"/finish/$"))
    assert page.inner_text("#completion-code") == code
    assert page.get_attribute("#link-return", "href") == f"https://connect.invalid/c?code={code}"
    _shot(page, shots, f"link-code-{size}")


@pytest.mark.parametrize("size", SIZES)
def test_a_task_resumed_elsewhere_says_where_its_answers_are(live_server, browser, researcher, tmp_path, size):
    survey = make_survey(researcher, n_contexts=6, assignments_per_hit=1)
    desktop = browser.new_context(viewport=DESKTOP).new_page()
    _start(desktop, live_server.url, survey)
    for item in desktop.query_selector_all(".task-item")[:5]:
        item.query_selector('input[type=radio][value="4"]').click()
    code = desktop.inner_text(".resume-code strong")

    phone = _context(browser, size).new_page()
    phone.goto(f"{live_server.url}/s/{survey.token}/")
    phone.click("text=Started already on another device?")
    phone.fill("#resume-code", code)
    phone.click("form:has(#resume-code) button")
    phone.click("text=Continue your task")
    phone.wait_for_url(re.compile(r"/a/[^/]+/\?resumed=1$"))
    assert phone.is_visible("#resumed-note") and not phone.is_visible("#restored-note")
    assert phone.inner_text("#answered-count") == "0"
    _shot(phone, screenshot_dir(tmp_path), f"resumed-{size}")

    # The browser that kept the answers, sent the same way, is not told they are elsewhere.
    desktop.goto(f"{desktop.url}?resumed=1")
    assert desktop.is_visible("#restored-note") and not desktop.is_visible("#resumed-note")


@pytest.mark.parametrize("size", SIZES)
def test_the_gold_warning_on_the_survey_page(live_server, browser, researcher, tmp_path, size):
    dataset = load_dataset_records(records=dataset_records(6), name="walk-study", owner=researcher)
    gold = [{"turns": ["Is fire cold?"], "response_text": "Yes, fire is freezing cold.", "accepted_scores": [1, 2]}]
    survey = services.survey_create(
        dataset=dataset, name="walk-rate", owner=researcher, contexts_per_hit=3, attention_checks_per_hit=2,
        gold_checks=gold,
    )  # fmt: skip
    page = _context(browser, size).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"{live_server.url}/surveys/{survey.pk}/")
    warning = page.locator("#estimate-gold-short")
    assert warning.inner_text().startswith("1 gold check for 2 gold blocks")
    warning.evaluate("e => e.scrollIntoView()")
    _shot(page, screenshot_dir(tmp_path), f"gold-warning-{size}")
