"""The survey tables (the Surveys list, a dataset's surveys) on a phone, in real headless Chromium:
each survey reads as a card, every cell on screen and labelled; at a laptop's width they stay tables.
They once scrolled sideways in their box, a survey's progress and quality link off-screen."""

import pytest

from tests.annotation.browser_pages import DESKTOP, PHONE, fits
from tests.annotation.studies_helpers import make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OFF_SCREEN = """(table) => [...table.querySelectorAll('tbody td')]
    .filter(td => td.getBoundingClientRect().right > window.innerWidth + 1)
    .map(td => td.innerText.trim())"""


def _log_in(page, live_server, user):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("load")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1366"])
def test_survey_tables_show_every_cell_on_screen(live_server, browser, researcher, viewport):
    survey = make_survey(researcher, name="a-survey-with-a-rather-long-name")
    page = browser.new_context(viewport=viewport).new_page()
    _log_in(page, live_server, researcher)
    pages = (("/surveys/", "main table"), (f"/datasets/{survey.dataset_id}/", "#surveys ~ .table-scroll table"))
    for path, table in pages:
        page.goto(f"{live_server.url}{path}")
        assert page.eval_on_selector(table, OFF_SCREEN) == [], f"cells off-screen in {table}"
        assert fits(page)
        if viewport is PHONE:
            label = "td => getComputedStyle(td, '::before').content"
            assert page.eval_on_selector(f"{table} td[data-label=Status]", label) == '"Status"'
