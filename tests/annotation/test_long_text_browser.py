"""Dataset text with a very long unbroken word (a URL, a base64 blob, a line of "xxxx…") wraps
inside the window: the dataset page once grew as wide as the word (18,937,635 px for a 2 MB turn),
in real headless Chromium at a laptop's and a phone's width."""

import pytest
from django.db import connections
from playwright.sync_api import sync_playwright

from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WORD = "https://example.org/" + "x" * 3000


@pytest.fixture
def browser(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        connections.close_all()


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
