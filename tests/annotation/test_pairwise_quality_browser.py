"""The quality page of a pairwise survey in real headless Chromium at desktop and phone sizes: the
exclusions with their reasons, agreement per question, no page wider than its window.

Screenshots go to $SCREENSHOT_DIR when it is set, else to pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse

from annotation.quality.recompute import quality_recompute
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers
from tests.annotation.test_mturk_page_browser import SIZES
from tests.annotation.test_pairwise_rules import _always_left_and_careless_on_repeats, _better, _submit
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pairwise_quality_page_shows_reasons_and_per_question_agreement_and_fits(
    browser,
    live_server,
    researcher,
    tmp_path,
):
    survey = make_pairwise_survey(
        researcher, n_contexts=3, contexts_per_hit=3, assignments_per_hit=4, aspects=["engaging"],
        max_position_bias=0.3, min_position_judgements=10, min_repeat_consistency=1.0, min_repeats=1,
    )  # fmt: skip
    for worker in ("w1", "w2", "w3"):
        _submit(survey, worker, lambda assignment: pairwise_answers(assignment, choose=_better))
    _submit(survey, "lefty", _always_left_and_careless_on_repeats)
    quality_recompute(survey=survey)
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}{reverse('login')}")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}{reverse('annotation:quality_index')}")
        page.click(f"text={survey.name}")
        page.wait_for_selector("#pairwise-aspects")
        excluded = page.locator("#excluded + .table-scroll").inner_text()
        assert "lefty" in excluded and "chose the left reply in 18 of 18" in excluded
        assert page.locator("#pairwise-aspects + .table-scroll tbody tr").count() == 2
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"pairwise-quality-{label}-{width}x{height}.png"))
        page.screenshot(path=str(shots / f"pairwise-quality-{label}-full.png"), full_page=True)
        page.close()
