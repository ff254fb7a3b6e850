import re

import pytest

from tests.annotation.studies_helpers import make_survey
from tests.annotation.test_annotator_browser import _answer
from tests.annotation.test_browser_flow import browser  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
OUT = "/work/helpers/shots/annotator"


def test_shots(live_server, browser, researcher):  # noqa: F811
    survey = make_survey(researcher, assignments_per_hit=2)
    for name, size, touch in (("desktop", (1366, 900), False), ("phone", (390, 844), True)):
        page = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=touch, is_mobile=touch).new_page()
        page.goto(f"{live_server.url}/s/{survey.token}/?worker=ann-{name}")
        page.screenshot(path=f"{OUT}/start-{name}.png", full_page=True)
        page.click("text=Start a task")
        page.wait_for_url(re.compile(r"/a/[^/]+/$"))
        total = len(page.query_selector_all(".task-item"))
        _answer(page, numbers=set(range(1, total + 1)) - {3, 7})
        page.click("#submit-hit")
        page.screenshot(path=f"{OUT}/task-missing-{name}.png")
        page.query_selector('.task-item[data-number="3"]').scroll_into_view_if_needed()
        page.screenshot(path=f"{OUT}/task-missing-item-{name}.png")
        page.screenshot(path=f"{OUT}/task-missing-full-{name}.png", full_page=True)
        _answer(page, numbers={3, 7})
        page.click("#submit-hit")
        page.wait_for_url(re.compile(r"/done/$"))
        page.screenshot(path=f"{OUT}/done-{name}.png", full_page=True)
        page.goto(f"{live_server.url}/s/{survey.token}/")
        page.screenshot(path=f"{OUT}/start-returning-{name}.png", full_page=True)
