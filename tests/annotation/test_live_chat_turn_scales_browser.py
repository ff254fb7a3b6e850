"""Per-turn ratings under the bot's replies in real headless Chromium at 390 px: a 1-5 choice under
each reply, kept by the server as it is clicked (a reload shows it again), End refused while a reply
is unrated (the page says so), and the ratings stored once the task is handed in."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from annotation.models import ConversationRating
from tests.annotation.browser_pages import PHONE, fits, screenshot_dir
from tests.annotation.live_chat_helpers import chat_survey, chat_system
from tests.stand_in_bot import stand_in_bot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


def _rate(page, reply, value):
    choice = page.locator("#chat-turns .bot-turn").nth(reply).locator(".turn-scale label", has_text=str(value))
    with page.expect_response(lambda r: r.url.endswith("/chat/") and r.request.method == "POST"):
        choice.click()
    expect(choice.locator("input")).to_be_checked()


def test_a_phone_rates_each_reply_under_it_and_the_ratings_are_kept(live_server, browser, researcher, tmp_path):
    shots = screenshot_dir(tmp_path)
    with stand_in_bot("ok", delay=0.05) as bot:
        survey = chat_survey(researcher, [chat_system(researcher, bot.base_url)], min_turns=2, max_turns=3,
                             per_system=1, turn_scales=["quality=How good is this reply?"])  # fmt: skip
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        page = context.new_page()
        page.goto(f"{live_server.url}/s/{survey.token}/")
        page.click("text=Start a task")
        page.wait_for_url(re.compile(r"/a/[^/]+/$"))
        for n in (1, 2):
            page.wait_for_selector("#chat-send:not([disabled])")
            page.fill("#chat-input", f"message number {n}")
            page.click("#chat-send")
            expect(page.locator("#chat-turns .bubble")).to_have_count(2 * n, timeout=15000)
        expect(page.locator("#chat-turns .bot-turn .turn-scale")).to_have_count(2)
        _rate(page, 0, 2)
        page.click("#chat-end")  # the second reply is unrated: refused, saying so
        expect(page.locator("#chat-problem")).to_contain_text("Rate every reply of the chatbot")
        _rate(page, 1, 5)
        page.reload()
        expect(page.locator("#chat-turns .bot-turn").nth(1).locator('.turn-scale input[value="5"]')).to_be_checked()
        assert fits(page), "no sideways scrolling"
        page.screenshot(path=str(shots / "chat-turn-scales-390.png"), full_page=True)
        page.click("#chat-end")
        page.wait_for_selector("#chat-final", state="visible")
        expect(page.locator(".turn-scale input").first).to_be_disabled()
        for fieldset in page.query_selector_all("#chat-final fieldset.scale"):
            fieldset.query_selector('input[value="4"]').click()
        page.click("#submit-hit")
        page.wait_for_url(re.compile(r"/done/$"))
        context.close()
    stored = ConversationRating.objects.filter(aspect="quality").order_by("turn__index")
    assert list(stored.values_list("turn__index", "score")) == [(1, 2), (3, 5)]
