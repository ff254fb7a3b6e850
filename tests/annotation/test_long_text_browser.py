"""Dataset text with a very long unbroken word (a URL, a base64 blob, a line of "xxxx…") wraps
inside the window: the dataset page once grew as wide as the word (18,937,635 px for a 2 MB turn),
in real headless Chromium at a laptop's and a phone's width."""

import pytest

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
