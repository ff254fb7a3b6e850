"""A pairwise judge's page in real headless Chromium at desktop and phone sizes, reached by
clicking from the judges list: pairwise wording and the swap figures, no page wider than its window.

Screenshots go to $SCREENSHOT_DIR when it is set, else to pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from scoring.judges import prompts
from tests.annotation.test_mturk_page_browser import SIZES
from tests.conftest import PASSWORD
from tests.scoring.judge_helpers import make_judge
from tests.scoring.test_judges_pairwise_study import picks_the_good_reply, study  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged(study, researcher, chat_server):  # noqa: F811
    # Before the browser fixture: Playwright's sync API runs an event loop, and the judge's client
    # runs its own (asyncio.run) for the requests.
    chat_server.answer = picks_the_good_reply
    make_judge(researcher, chat_server, name="oracle", template=prompts.PAIRWISE)
    call_command("judge_pairs", "--judge", "oracle", "--dataset", "ab")


def test_the_pairwise_judge_page_speaks_of_pairs_and_fits_desktop_and_phone(
    judged,
    browser,
    live_server,
    tmp_path,
):
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}{reverse('login')}")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}{reverse('scoring:judges')}")
        page.click("#judges >> text=oracle")
        figures = page.locator("#judge-pairs-figures").inner_text()
        assert "Same winner after the swap" in figures and "pairs of ab" in figures
        assert "Which of two replies" in page.locator("#judges-what").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"pairwise-judge-{label}-{width}x{height}.png"))
        page.screenshot(path=str(shots / f"pairwise-judge-{label}-full.png"), full_page=True)
        page.close()
