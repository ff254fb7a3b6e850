"""The list tables (the Surveys list, a dataset's surveys, the quality index, the ADEM models) on a
phone, in real headless Chromium: each row reads as a card, every cell on screen and labelled; at a
laptop's width they stay tables. They once scrolled sideways in their box, a survey's progress,
status and quality link (a model's test scores and status) off-screen."""

import pytest

from annotation.quality.services import quality_recompute
from scoring.models import AdemModel
from tests.annotation.browser_pages import DESKTOP, PHONE, fits
from tests.annotation.collected import build_collected_survey
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
    AdemModel.objects.create(name="my-adem", owner=researcher, dataset=survey.dataset, status=AdemModel.Status.READY)
    page = browser.new_context(viewport=viewport).new_page()
    _log_in(page, live_server, researcher)
    pages = (
        ("/surveys/", "main table"),
        (f"/datasets/{survey.dataset_id}/", "#surveys ~ .table-scroll table"),
        ("/quality/", "main table"),
        ("/scoring/adem/", "main table"),
    )
    for path, table in pages:
        page.goto(f"{live_server.url}{path}")
        assert page.eval_on_selector(table, OFF_SCREEN) == [], f"cells off-screen in {table}"
        assert fits(page)
        if viewport is PHONE:
            shown = "td => [getComputedStyle(td, '::before').content, JSON.stringify(td.dataset.label)]"
            label, expected = page.eval_on_selector(f"{table} td[data-label]", shown)
            assert label == expected, "each cell is labelled on a phone"


def test_a_surveys_quality_annotators_read_as_cards_on_a_phone(live_server, browser, researcher):
    survey = build_collected_survey(owner=researcher)
    quality_recompute(survey=survey)
    page = browser.new_context(viewport=PHONE).new_page()
    _log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
    table = "#quality-annotators"
    assert page.eval_on_selector(table, OFF_SCREEN) == [], "an annotator's status is off-screen"
    assert fits(page)
    status = page.eval_on_selector(f"{table} td[data-label=Status]", "td => getComputedStyle(td, '::before').content")
    assert status == '"Status"'
