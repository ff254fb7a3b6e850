"""The report page in real headless Chromium: log in, open the report, see tables and a plot."""

import os
import shutil
from pathlib import Path

import pytest
from django.db import connections

from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.shared_data, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def page(monkeypatch):
    # Playwright's sync API keeps an event loop on this thread; Django's ORM, used by the test
    # itself while the browser is open, would otherwise refuse to run.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("chromium not installed")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser.new_page()
        browser.close()
        # The test's ORM calls while Playwright runs leave a connection pytest-django's teardown
        # does not close; on PostgreSQL it kept the test database from being dropped at the end.
        connections.close_all()


@pytest.fixture(autouse=True)
def quick_reports(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path


def test_report_page_renders_tables_and_plots_in_chromium(live_server, page, usr_study, researcher):
    dataset = usr_study[0]
    page.goto(f"{live_server.url}/analysis/datasets/{dataset.pk}/report/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-utterance_level")  # eager Celery computed the report in the request
    rows = page.locator("section[aria-labelledby=t-utterance_level] tbody tr")
    assert rows.count() == 3
    assert "overlap_f1" in rows.first.inner_text() or "length" in rows.first.inner_text()
    plot = page.locator("img[alt^='Scatter of length']")
    assert not plot.is_visible(), "the per-metric plots wait behind their toggle"
    page.click("#metric-plots summary")
    plot.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=plot.element_handle())
    assert plot.evaluate("img => img.naturalWidth") > 100


def page_width(page):
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("window", [(1366, 900), (390, 844)])
def test_report_page_is_never_wider_than_the_window_and_wide_tables_scroll_in_their_box(
    live_server, page, usr_study, researcher, window
):
    dataset = usr_study[0]
    width, height = window
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/analysis/datasets/{dataset.pk}/report/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-systems")
    page.wait_for_load_state("load")  # the stylesheets too: an unstyled table is wider
    assert page_width(page) <= width
    boxes = page.locator(".report-table")
    assert boxes.count() >= 5
    # The per-system table (6 columns of "mean [low, high]") overflows a phone inside its own box.
    systems = page.locator("section[aria-labelledby=t-systems] .report-table")
    if width == 390:
        assert systems.evaluate("box => box.scrollWidth > box.clientWidth")
    # Browser walk F17: a box with hidden columns says so above it and marks its edge; one that
    # fits says nothing. At 1366 the report uses the window, not the 72rem column of other pages.
    marks = boxes.evaluate_all(
        """els => els.filter(b => b.offsetParent).map(b => [b.scrollWidth > b.clientWidth + 1,
            b.classList.contains('overflowing'), !!(b.previousElementSibling
            && b.previousElementSibling.classList.contains('scroll-hint') && !b.previousElementSibling.hidden)])"""
    )
    assert marks and all(over == marked == hinted for over, marked, hinted in marks)
    if width == 390:
        assert any(over for over, _, _ in marks)
    else:
        assert page.evaluate("document.querySelector('main').clientWidth") > 72 * 16
    page.click("section[aria-labelledby=t-williams] details summary")
    assert page.locator("section[aria-labelledby=t-williams] details table").is_visible()
    assert page_width(page) <= width
    shots = os.environ.get("RATELAB_SHOTS")
    if shots:  # screenshots for people to look at: RATELAB_SHOTS=/folder pytest -m browser ...
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{shots}/usr-report-{width}.png", full_page=True)


def test_recomputing_banner_reloads_the_page_by_itself_when_the_new_report_is_ready(
    live_server, page, usr_study, researcher
):
    from django.utils import timezone

    from analysis.models import Report

    dataset = usr_study[0]
    url = f"{live_server.url}/analysis/datasets/{dataset.pk}/report/"
    page.goto(url)
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-utterance_level")
    # A recomputation under way (queued, not finished): the page says so and polls status.json.
    Report.objects.filter(dataset=dataset).update(requested_at=timezone.now())
    page.goto(url)
    assert "Recomputing since" in page.inner_text("#report-status")
    # The computation finishes: the page's script sees it and reloads, and the banner is gone.
    Report.objects.filter(dataset=dataset).update(computed_at=timezone.now())
    # A locator wait, not wait_for_function: the page's CSP forbids the eval that a string predicate needs.
    page.locator("#report-status").wait_for(state="detached", timeout=20_000)
    assert page.locator("#t-utterance_level").is_visible()
