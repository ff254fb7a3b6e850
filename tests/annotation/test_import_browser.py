"""The upload form in real headless Chromium: a file with several problems lists each of them
beside the file field, readable on a laptop and on a phone."""

import os
from pathlib import Path

import pytest

from annotation.models import Dataset
from tests.annotation.test_import_errors import BROKEN_ON_3_AND_5, EXPECTED_3_AND_5
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Set to a folder to keep the screenshots (e.g. for a review); the test checks the page either way.
SHOTS_DIR = os.environ.get("RATELAB_SHOTS_DIR")


@pytest.mark.parametrize("viewport", [(1366, 900), (390, 844)], ids=["laptop", "phone"])
def test_upload_form_lists_every_error_of_a_file_on_laptop_and_phone(
    live_server, browser, researcher, tmp_path, viewport
):
    width, height = viewport
    broken = tmp_path / "broken.jsonl"
    broken.write_text(BROKEN_ON_3_AND_5, encoding="utf-8")
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"{live_server.url}/datasets/upload/")
    page.fill("input[name=name]", "study")
    page.set_input_files("input[name=file]", str(broken))
    page.click("form.stack button[type=submit]")
    page.wait_for_selector("ul.errorlist li")

    shown = page.eval_on_selector_all("ul.errorlist li", "items => items.map(li => li.textContent.trim())")
    assert shown == EXPECTED_3_AND_5
    for item in page.query_selector_all("ul.errorlist li"):
        assert item.is_visible()
        # Each message wraps inside the window. (The page's own width is the layout's business:
        # at 390 px the intro's long <code> column list is what reaches past the edge.)
        assert item.bounding_box()["x"] + item.bounding_box()["width"] <= width
    if SHOTS_DIR:
        page.locator("ul.errorlist").scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SHOTS_DIR) / f"upload-errors-{width}x{height}.png"), full_page=True)
    assert Dataset.objects.count() == 0
