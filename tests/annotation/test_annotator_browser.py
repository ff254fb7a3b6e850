"""The annotator page in real headless Chromium: answers kept across a reload, a warning before
leaving with answers not submitted, missing items marked and named, two tabs of a first visit
that lose nothing, and the keyboard hint left off touch screens."""

import re

import pytest

from annotation.models import Assignment, Rating
from tests.annotation.studies_helpers import make_survey

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TASK_URL = re.compile(r"/a/[^/]+/$")


def _started(page, survey, base_url):
    page.goto(f"{base_url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(TASK_URL)
    return page.url


def _answer(page, numbers=None):
    """Click an answer for the replies `numbers` (all when None); instructed checks get theirs."""
    for item in page.query_selector_all(".task-item"):
        number = int(item.get_attribute("data-number"))
        if numbers is not None and number not in numbers:
            continue
        asked = re.search(r"Please choose (\d)", item.inner_text())
        item.query_selector(f'input[type=radio][value="{asked.group(1) if asked else 4}"]').click()


def _checked(page):
    return page.eval_on_selector_all("input[type=radio]:checked", "els => els.map(e => e.name + '=' + e.value)")


def test_answers_survive_a_reload_and_leaving_asks_first(live_server, browser, researcher):
    survey = make_survey(researcher)
    page = browser.new_context().new_page()
    url = _started(page, survey, live_server.url)
    dialogs = []

    def on_dialog(dialog):
        dialogs.append(dialog.type)
        dialog.accept()

    page.on("dialog", on_dialog)
    _answer(page, numbers={1, 2, 3})
    before = _checked(page)
    assert len(before) == 3 and page.inner_text("#answered-count") == "3"

    page.reload()
    assert dialogs == ["beforeunload"], "leaving with answers not submitted asks first"
    assert sorted(_checked(page)) == sorted(before), "the answers given are restored"
    assert page.is_visible("#restored-note") and page.inner_text("#answered-count") == "3"

    _answer(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert dialogs == ["beforeunload"], "submitting asks nothing"
    token = url.rstrip("/").rsplit("/", 1)[-1]
    assert page.evaluate(f"localStorage.getItem('ratelab-task:{token}')") is None, "the kept copy is cleared"
    assert Rating.objects.count() == 12


def test_an_untouched_task_page_leaves_without_asking(live_server, browser, researcher):
    survey = make_survey(researcher)
    page = browser.new_context().new_page()
    _started(page, survey, live_server.url)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    page.reload()
    assert dialogs == []


def test_submit_with_missing_items_marks_them_names_them_and_focuses_the_summary(
    live_server,
    browser,
    researcher,
):
    survey = make_survey(researcher)
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    _started(page, survey, live_server.url)
    total = len(page.query_selector_all(".task-item"))
    _answer(page, numbers=set(range(1, total + 1)) - {3, 7})
    page.click("#submit-hit")
    summary = page.inner_text("#error-summary")
    assert "replies 3 and 7 are still unanswered" in summary
    assert page.evaluate("document.activeElement.id") == "error-summary", "focus moves to the summary"
    marked = page.eval_on_selector_all(".task-item.missing", "els => els.map(e => e.dataset.number)")
    assert marked == ["3", "7"]
    for number in ("3", "7"):
        item = page.query_selector(f'.task-item[data-number="{number}"]')
        assert item.query_selector(".item-error").is_visible()
        assert item.query_selector("input[type=radio]").get_attribute("aria-invalid") == "true"
    assert page.url.endswith("/") and not Rating.objects.exists(), "nothing was sent"

    _answer(page, numbers={3})
    assert not page.query_selector('.task-item[data-number="3"]').get_attribute("class").endswith("missing")
    _answer(page, numbers={7})
    assert page.is_hidden("#error-summary")
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert Rating.objects.count() == 12


def test_two_tabs_of_a_first_visit_lose_nothing(live_server, browser, researcher):
    """Two tabs opened at once each receive a CSRF cookie and the last one wins. The race is made
    certain here by dropping the cookie between the tabs' first loads, which is what it leaves."""
    survey = make_survey(researcher)
    context = browser.new_context()
    first = context.new_page()
    first.goto(f"{live_server.url}/s/{survey.token}/")
    context.clear_cookies(name="csrftoken")
    second = context.new_page()
    second.goto(f"{live_server.url}/s/{survey.token}/")

    first.click("text=Start a task")
    assert "open in another tab" in first.inner_text("#start-error")
    first.click("text=Start a task")
    first.wait_for_url(TASK_URL)
    assert Assignment.objects.filter(status=Assignment.Status.ACTIVE).count() == 1

    # The second tab is in front: Chromium throttles the animation frames of a tab behind it, which
    # Playwright waits on before each click (twelve clicks took 25 s).
    first.bring_to_front()
    _answer(first)
    answers = _checked(first)
    context.clear_cookies(name="csrftoken")
    second.goto(first.url)  # the same task in the other tab: a fresh CSRF cookie again
    first.click("#submit-hit")
    first.wait_for_load_state()
    summary = first.inner_text("#error-summary")
    assert "open in another tab" in summary and "answers are kept" in summary
    assert sorted(_checked(first)) == sorted(answers) and not Rating.objects.exists()
    first.click("#submit-hit")
    first.wait_for_url(re.compile(r"/done/$"))
    assert Rating.objects.count() == 12
    second.reload()
    assert second.url.endswith("/done/"), "the other tab now shows the task as done"


def test_the_keyboard_hint_shows_on_a_desktop_and_not_on_a_touch_screen(live_server, browser, researcher):
    survey = make_survey(researcher, assignments_per_hit=2)
    desktop = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    _started(desktop, survey, live_server.url)
    phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True).new_page()
    _started(phone, survey, live_server.url)
    assert desktop.is_visible(".keyboard-hint") and phone.is_hidden(".keyboard-hint")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scroll on a phone"


def test_the_id_field_says_what_it_expects_and_the_focus_ring_is_dark(live_server, browser, researcher):
    survey = make_survey(researcher)
    page = browser.new_context().new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.fill("#worker", "my name")
    page.click("text=Start a task")
    assert "1-64 letters, digits or . _ - @ :" in page.eval_on_selector("#worker", "e => e.validationMessage")
    assert page.url.endswith(f"/s/{survey.token}/") and not Assignment.objects.exclude(status="open").exists()

    page.fill("#worker", "")
    page.click("text=Start a task")
    page.wait_for_url(TASK_URL)
    page.keyboard.press("Tab")
    while page.evaluate("document.activeElement.type") != "radio":
        page.keyboard.press("Tab")
    ring = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement.closest('label'));"
        " return [s.outlineStyle, s.outlineWidth, s.outlineColor]; })()"
    )
    # #1a1a1a on the white page: about 17:1 (the site-wide amber ring was about 2:1).
    assert ring == ["solid", "3px", "rgb(26, 26, 26)"]
