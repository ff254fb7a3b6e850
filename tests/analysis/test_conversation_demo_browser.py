"""The demo's conversation study in real headless Chromium at 1366 and 390 px (issue 37): reached
by clicking from / (the dataset list says what it holds), its report's Conversations section with
the turn-metric and repeat-pair tables, none wider than the window."""

import io
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from analysis.report.report_keys import report_params
from analysis.services.build import report_get_or_create, report_refresh
from annotation.kinds.conversation.demo import CONVERSATION_DATASET, conversation_demo
from tests.analysis.test_browser import page, page_width  # noqa: F401 (the Chromium page fixture)
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(researcher, settings):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 100
    built = conversation_demo(owner=researcher, seed=7)
    call_command("compute_conversation_metrics", "--dataset", CONVERSATION_DATASET, "--owner", researcher.username,
                 stdout=io.StringIO())  # fmt: skip
    report_refresh(report=report_get_or_create(dataset=built.dataset, survey=None, params=report_params()))
    return built


@pytest.mark.parametrize("window", [(1366, 900), (390, 844)])
def test_the_demo_conversation_report_is_reached_from_home_and_fits(live_server, page, demo, researcher, window):  # noqa: F811
    width, height = window
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/")
    if page.locator("input[name=username]").count():
        page.fill("input[name=username]", researcher.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_load_state("load")
    page.goto(f"{live_server.url}/datasets/")
    row = page.locator("tr", has_text=CONVERSATION_DATASET)
    assert "96 conversations" in row.inner_text()
    assert page_width(page) <= width
    shots = os.environ.get("RATELAB_SHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=f"{shots}/dataset-list-{width}.png", full_page=True)
    row.locator("a", has_text=CONVERSATION_DATASET).click()
    page.wait_for_load_state("load")
    assert "96 conversations" in page.locator("main").inner_text()
    assert page_width(page) <= width
    if shots:
        page.screenshot(path=f"{shots}/dataset-page-{width}.png")
    page.locator("nav.pipeline a", has_text="Report").first.click()
    page.wait_for_selector("#t-conversation_systems")
    page.wait_for_load_state("load")
    for name in ("conversation_turn_metrics", "conversation_acute_consistency", "conversation_acute",
                 "conversation_turn_systems", "conversation_flags"):  # fmt: skip
        assert page.locator(f"#t-{name}").is_visible(), name
    assert page_width(page) <= width
    if shots:
        page.screenshot(path=f"{shots}/demo-conversation-report-{width}.png", full_page=True)
        page.locator("#t-conversation_turn_metrics").scroll_into_view_if_needed()
        page.screenshot(path=f"{shots}/demo-turn-metrics-{width}.png")
        page.locator("#t-conversation_acute_consistency").scroll_into_view_if_needed()
        page.screenshot(path=f"{shots}/demo-acute-consistency-{width}.png")
    # the live per-turn task a demo user tries: blind, fits the window
    page.goto(f"{live_server.url}/s/{demo.live_turns.token}/")
    page.click("button[name=action][value=start], button:has-text('Start')")
    page.wait_for_selector(".conv-block")
    assert page_width(page) <= width
    text = page.locator("main").inner_text()
    assert not any(bot in text for bot in ("attentive", "chatty", "looper", "drifter"))
    if shots:
        page.screenshot(path=f"{shots}/demo-live-turns-{width}.png")
