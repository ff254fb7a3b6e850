"""Issue 39's report parts in real headless Chromium at a laptop's and a phone's width: the alt-test
verdicts with their reasoning a click away, the calibration and cost panels, the WMT ranking and
the arena tables, none widening the page. Screenshots go to SHOTS (looked at by hand)."""

import os
import shutil
from pathlib import Path

import pytest
from django.db import connections

from tests.analysis.test_judges_vs_crowd import judged_pairs_study, rated  # noqa: F401 (fixtures)
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(os.environ.get("SHOTS_DIR", "/tmp/shots-judgecrowd"))
SIZES = {"1366": (1366, 900), "390": (390, 844)}


@pytest.fixture
def browser(monkeypatch):
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("chromium not installed")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()
        connections.close_all()


@pytest.fixture(autouse=True)
def quick_reports(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 30
    settings.ANALYSIS_PERMUTATIONS = 20
    settings.MEDIA_ROOT = tmp_path


def open_report(browser, live_server, researcher, dataset, size, *, query=""):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(f"{live_server.url}/analysis/datasets/{dataset.pk}/report/{query}")
    if page.locator("input[name=username]").count():
        page.fill("input[name=username]", researcher.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-alt-test")
    return page


def shoot(page, anchor, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator(anchor).scroll_into_view_if_needed()
    page.evaluate(f"document.querySelector('{anchor}').scrollIntoView()")
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_the_rating_studys_judge_panels_fit_the_window(browser, live_server, researcher, rated):  # noqa: F811
    for label, size in SIZES.items():
        page = open_report(browser, live_server, researcher, rated, size)
        page.click("#alt-test-verdicts li:first-child details summary")
        assert page.locator("#alt-test-verdicts li:first-child details tbody tr").count() == 4
        assert "yes" in page.locator("#alt-test-verdicts").inner_text()
        shoot(page, "#t-alt-test", f"ratings-alt-test-{label}")
        page.click("#judge-calibration-section details summary")
        shoot(page, "#t-judge-calibration", f"ratings-calibration-{label}")
        shoot(page, "#t-judge_cost", f"ratings-cost-{label}")
        shoot(page, "#t-wmt_statistics", f"ratings-wmt-{label}")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), label
        page.close()


def test_the_pairwise_studys_arena_and_judge_fit_the_window(browser, live_server, researcher, judged_pairs_study):  # noqa: F811
    for label, size in SIZES.items():
        page = open_report(browser, live_server, researcher, judged_pairs_study, size, query="?scale=elo")
        assert "Rank (UB)" in page.locator("#t-arena_ranking").locator("xpath=..").inner_text()
        shoot(page, "#t-arena_ranking", f"pairwise-arena-{label}")
        shoot(page, "#t-alt-test", f"pairwise-alt-test-{label}")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), label
        page.close()
