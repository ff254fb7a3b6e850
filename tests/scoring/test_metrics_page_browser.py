"""The metrics page's metric chooser in real headless Chromium, at a laptop's and a phone's width:
each checkbox sits on the same line as its own metric's name (a wrapped line once put a box at one
line's end and its name at the next line's start, where it read as the next metric's box)."""

import pytest

from tests.annotation.browser_pages import DESKTOP, PHONE, fits
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORDS = [
    {"context_id": "c1", "context": ["Hi"], "references": ["Hello"], "responses": [{"system": "a", "text": "Hey"}]}
]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_every_metric_checkbox_is_on_the_line_of_its_own_name(live_server, browser, researcher, viewport):
    dataset = load_dataset_records(records=RECORDS, name="tiny", owner=researcher)
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"{live_server.url}/scoring/datasets/{dataset.pk}/metrics/")
    page.click("summary:has-text('Choose metrics')")
    apart = page.eval_on_selector_all(
        "form details label:has(input[name=metric])",
        """labels => labels.filter(label => {
            const box = label.querySelector('input').getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(label);
            const rects = [...range.getClientRects()].filter(r => r.width > 0);
            const text = rects[rects.length - 1];
            return Math.abs((box.top + box.bottom) / 2 - (text.top + text.bottom) / 2) > box.height;
        }).map(label => label.innerText.trim())""",
    )
    assert page.locator("form details label:has(input[name=metric])").count() > 20
    assert apart == [], f"checkbox and name on different lines: {apart}"
    assert fits(page)
