"""Dataset text with a very long unbroken word (a URL, a base64 blob, a line of "xxxx…") wraps
inside the window: the dataset page once grew as wide as the word (18,937,635 px for a 2 MB turn),
in real headless Chromium at a laptop's and a phone's width."""

import pytest

from tests.annotation.browser_pages import PHONE, fits
from tests.annotation.studies_helpers import make_survey
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORD = "https://example.org/" + "x" * 3000


@pytest.mark.parametrize("width", [1366, 390])
def test_a_long_unbroken_word_in_the_data_wraps_inside_the_window(live_server, browser, researcher, width):
    record = {
        "context_id": "c1",
        "context": [WORD, {"speaker": "B", "text": WORD}],
        "references": [WORD],
        "responses": [{"system": "hred", "text": WORD}],
        "topic": WORD,
    }
    dataset = load_dataset_records(records=[record], name="long-words", owner=researcher)
    dataset.description = WORD
    dataset.save(update_fields=["description"])
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit], input[type=submit]")
    with page.expect_navigation():
        page.locator("main a:text-is('long-words')").click()
    assert page.locator(".turn").count() == 2
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the dataset page is {scroll_width} px wide in a {width} px window"


# An aspect's name may be 50 characters without a space or a dash (docs/studies.md), and its question
# names it: one word as wide as a phone.
LONG_ASPECT = "relevanceinformativenessconsistencyandengagingness"


@pytest.mark.parametrize("task_type", ["rate", "pairwise"])
def test_a_long_aspect_name_keeps_every_answer_of_its_scale_on_a_phone(live_server, browser, researcher, task_type):
    survey = make_survey(researcher, task_type=task_type, aspects=[LONG_ASPECT])
    # A phone's browser widens its layout to the widest box, so `innerWidth` grows with the page:
    # the screen's width is `clientWidth` of a page that does not overflow it.
    page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True).new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    with page.expect_navigation():
        page.click("text=Start a task")
    assert LONG_ASPECT in page.inner_text("legend >> nth=1").lower()
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= 390, f"the task page is {scroll_width} px wide on a 390 px phone"
    beyond = page.eval_on_selector_all(
        "label.choice", "labels => labels.filter(l => l.getBoundingClientRect().right > 390).length"
    )
    assert beyond == 0, f"{beyond} answers lie beyond the phone's right edge"


def test_fits_sees_a_page_wider_than_a_phone_where_the_phone_widens_its_layout(browser):
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.set_content('<meta name="viewport" content="width=device-width"><p style="width: 600px">wide</p>')
    assert not fits(page), "a page 600 px wide does not fit a 390 px phone"
    page.set_content('<meta name="viewport" content="width=device-width"><p>narrow</p>')
    assert fits(page)
