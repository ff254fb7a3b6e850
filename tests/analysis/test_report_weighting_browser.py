"""The report's human-score option (issue 40) in real headless Chromium at 1366 and 390 wide: chosen on the
page's form, the population line then names it; no part of the page is wider than the window.
Screenshots go to $SCREENSHOT_DIR (looked at by hand)."""

import pytest

from tests.analysis import test_judges_vs_crowd_browser as judges_browser
from tests.analysis import test_report_population as population
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.conftest import PASSWORD

browser = judges_browser.browser  # the fixtures
tiny = population.tiny

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_weighting_is_chosen_on_the_page_and_named_in_the_population_line(
    browser,
    live_server,
    researcher,
    tiny,
    tmp_path,
):
    dataset, _ = tiny
    shots = screenshot_dir(tmp_path)
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = browser.new_page(viewport=viewport)
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", researcher.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.goto(f"{live_server.url}/analysis/datasets/{dataset.pk}/report/")
        page.wait_for_selector("#report-population")
        assert "plain mean of the ratings" in page.inner_text("#report-population")
        page.select_option("#report-weighting", "zscore")
        page.click("form button[type=submit]:has-text('Apply')")
        page.wait_for_function(
            "() => document.querySelector('#report-population') && "
            "document.querySelector('#report-population').textContent.includes('z-scores')"
        )
        line = page.inner_text("#report-population")
        assert "mean of per-worker z-scores" in line and "stay on the raw ratings" in line
        assert page.input_value("#report-weighting") == "zscore"
        assert fits(page), label
        page.screenshot(path=str(shots / f"integrity3-report-weighting-{label}.png"))
        page.close()
