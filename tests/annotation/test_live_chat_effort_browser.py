"""The effort rule's evidence as the chat page measures it, in real headless Chromium at 390 px:
a pause before typing is stored as the message's idle time, a paste as its pasted characters; then
the quality page (390 px and 1366 px) shows the chat's figures and the rule's verdict, no wider
than its window."""

import re

import pytest
from django.core.cache import cache
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import ChatSurveySettings, LiveChat
from annotation.quality.recompute import quality_recompute
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.live_chat_helpers import chat_survey, chat_system
from tests.conftest import PASSWORD
from tests.stand_in_bot import stand_in_bot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PASTED = "Tell me everything you know about lighthouses."
PASTE = """([box, text]) => {
  const data = new DataTransfer();
  data.setData("text/plain", text);
  document.querySelector(box).dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true}));
}"""


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


def _say(page, n_bubbles):
    page.click("#chat-send")
    expect(page.locator("#chat-turns .bubble")).to_have_count(n_bubbles, timeout=15000)
    page.wait_for_selector("#chat-send:not([disabled])")


def test_the_page_measures_pauses_and_pastes_and_the_quality_page_shows_the_verdict(
    live_server, browser, researcher, tmp_path
):
    shots = screenshot_dir(tmp_path)
    with stand_in_bot("ok", delay=0.05) as bot:
        survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)], min_turns=2, max_turns=3,
                             per_system=1, effort_max_pasted_share=0.4, effort_max_idle_seconds=600)  # fmt: skip
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        page = context.new_page()
        page.goto(f"{live_server.url}/s/{survey.token}/")
        page.click("text=Start a task")
        page.wait_for_url(re.compile(r"/a/[^/]+/$"))
        page.wait_for_selector("#chat-send:not([disabled])")
        page.wait_for_timeout(1500)  # a pause before the first key
        page.type("#chat-input", "hello there friend", delay=20)
        _say(page, 2)
        page.evaluate(PASTE, ["#chat-input", PASTED])
        page.fill("#chat-input", PASTED)
        _say(page, 4)
        page.click("#chat-end")
        page.wait_for_selector("#chat-final", state="visible")
        for fieldset in page.query_selector_all("#chat-final fieldset.scale"):
            fieldset.query_selector('input[value="4"]').click()
        page.click("#submit-hit")
        page.wait_for_url(re.compile(r"/done/$"))
        context.close()
    measures = dict(LiveChat.objects.get().attempts.values_list("user_turn", "telemetry"))
    assert set(measures) == {0, 2}
    assert measures[0]["pasted_chars"] == 0 and 1500 <= measures[0]["idle_ms"] < 60_000
    assert measures[2]["pasted_chars"] == len(PASTED)
    quality_recompute(survey=survey)
    assert ChatSurveySettings.objects.get(survey=survey).effort_max_pasted_share == 0.4
    for viewport in (PHONE, DESKTOP):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(f"{live_server.url}{reverse('login')}")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}{reverse('annotation:quality_survey', args=[survey.pk])}")
        verdict = page.locator("#chat-effort-table tbody tr").first
        expect(verdict).to_contain_text("left out: 1 of 2 measured messages mostly pasted (50%), above 0.4")
        assert fits(page), "no sideways scrolling"
        page.locator("#chat-effort").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"chat-quality-effort-{viewport['width']}.png"), full_page=True)
        context.close()
