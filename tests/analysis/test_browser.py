"""The report page in real headless Chromium: log in, open the report, see tables and a plot."""

import shutil

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
    plot.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=plot.element_handle())
    assert plot.evaluate("img => img.naturalWidth") > 100
