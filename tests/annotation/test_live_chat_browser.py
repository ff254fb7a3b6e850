"""A live chat in real headless Chromium against a real local stand-in bot, at 390 px (a phone) and
1366 px: five messages with a reload in the middle (the same conversation comes back, nothing
doubled), a flag under a bot reply, End conversation, the final questions, the completion step; the
conversation is then in the dataset and in the report's inputs. And a failing bot: a plain message
and "Try again", never the bot's body or name."""

import re

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from analysis.report.conversation_inputs import conversation_inputs
from annotation.models import Conversation, ConversationRating, ConversationTurn
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.live_chat_helpers import chat_survey, chat_system
from tests.stand_in_bot import SECRET_BODY, stand_in_bot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


def _start(page, live_server, survey):
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    page.wait_for_selector("#chat-send:not([disabled])")


def _say(page, text, n_bubbles):
    page.fill("#chat-input", text)
    page.click("#chat-send")
    expect(page.locator("#chat-turns .bubble")).to_have_count(n_bubbles, timeout=15000)
    page.wait_for_selector("#chat-typing", state="hidden")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1366"])
def test_a_chat_of_five_turns_with_a_reload_a_flag_and_the_final_questions(
    live_server, browser, researcher, viewport, tmp_path
):
    shots = screenshot_dir(tmp_path)
    with stand_in_bot("ok", delay=0.2) as bot:
        system = chat_system(researcher, bot.base_url, name="hidden-sys")
        survey = chat_survey(researcher, [system], min_turns=5, max_turns=8, per_system=1)
        phone = viewport is PHONE
        context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
        page = context.new_page()
        console = []
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        _start(page, live_server, survey)
        assert page.is_hidden("#submit-hit") and page.is_disabled("#chat-end")
        for n in range(1, 4):
            _say(page, f"message number {n}", 2 * n)
        page.screenshot(path=str(shots / f"chat-{viewport['width']}-three-turns.png"), full_page=True)
        page.reload()  # mid-conversation: the same turns come back
        expect(page.locator("#chat-turns .bubble")).to_have_count(6)
        texts = page.eval_on_selector_all("#chat-turns .bubble .text", "els => els.map(e => e.textContent)")
        assert texts[0] == "message number 1" and texts[-1] == "You said: message number 3"
        # flag the second bot reply (it is kept by the server at once)
        flag = page.locator("#chat-turns .bot-turn").nth(1).locator("label", has_text="Repetitive")
        flag.click()
        expect(flag.locator("input")).to_be_checked()
        page.wait_for_timeout(300)  # the flag's POST on its way
        for n in range(4, 6):
            _say(page, f"message number {n}", 2 * n)
        page.reload()
        expect(page.locator("#chat-turns .bubble")).to_have_count(10)
        assert page.locator("#chat-turns .bot-turn").nth(1).locator("input[type=checkbox]").nth(1).is_checked()
        assert fits(page), "no sideways scrolling"
        html = page.content()
        assert "hidden-sys" not in html and bot.base_url not in html
        page.click("#chat-end")
        page.wait_for_selector("#chat-final", state="visible")
        assert page.is_visible("#submit-hit") and page.is_hidden("#chat-compose")
        page.click("#submit-hit")  # a question left out: named, nothing sent
        assert page.is_visible(".item-error")
        for fieldset in page.query_selector_all("#chat-final fieldset.scale"):
            fieldset.query_selector('input[value="4"]').click()
        assert page.is_hidden(".item-error"), "the message goes once every question is answered"
        page.screenshot(path=str(shots / f"chat-{viewport['width']}-final.png"), full_page=True)
        page.click("#submit-hit")
        page.wait_for_url(re.compile(r"/done/$"))
        page.screenshot(path=str(shots / f"chat-{viewport['width']}-done.png"), full_page=False)
        assert not [t for t in console if "Content Security Policy" in t or "Refused" in t], console
        context.close()
    conversation = Conversation.objects.get(dataset=survey.dataset)
    turns = list(ConversationTurn.objects.filter(conversation=conversation).values_list("speaker", flat=True))
    assert turns == ["user", "system"] * 5, "every turn once"
    flags = ConversationRating.objects.filter(conversation=conversation, aspect="repetitive", turn__isnull=False)
    assert list(flags.order_by("turn__index").values_list("score", flat=True)) == [0, 1, 0, 0, 0]
    inputs = conversation_inputs(dataset=survey.dataset)
    assert inputs.system_of == {conversation.pk: "hidden-sys"}
    assert (conversation.pk, "overall", 4) in {(c, a, s) for _, c, a, s in inputs.whole}


def test_a_failing_bot_says_so_plainly_and_offers_a_retry(live_server, browser, researcher, tmp_path):
    shots = screenshot_dir(tmp_path)
    with stand_in_bot("failing") as bot:
        system = chat_system(researcher, bot.base_url, name="hidden-sys")
        survey = chat_survey(researcher, [system], per_system=1)
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        page = context.new_page()
        _start(page, live_server, survey)
        page.fill("#chat-input", "hello?")
        page.click("#chat-send")
        page.wait_for_selector("#chat-retry", state="visible")
        assert "The chatbot reported an error." in page.inner_text("#chat-problem")
        assert page.is_disabled("#chat-send")
        html = page.content()
        assert SECRET_BODY not in html and "hidden-sys" not in html
        page.screenshot(path=str(shots / "chat-390-failure.png"), full_page=True)
        page.click("#chat-retry")
        for _ in range(150):  # the retry's request reaches the bot
            if len(bot.requests) == 2:
                break
            page.wait_for_timeout(100)
        page.wait_for_selector("#chat-retry", state="visible")
        expect(page.locator("#chat-problem")).to_contain_text("reported an error")
        assert ConversationTurn.objects.count() == 1 and len(bot.requests) == 2
        context.close()
