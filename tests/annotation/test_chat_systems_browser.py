"""The chat systems pages in real headless Chromium on a laptop and a phone: reached by clicking from the
Surveys page, a system added, tested against a local stand-in bot (a reply, then a failure shown in
plain words), listed; no page wider than its window."""

import pytest

from annotation.models import ChatSystem
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.conftest import PASSWORD
from tests.stand_in_bot import SECRET_BODY, stand_in_bot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_KEY_VARIABLES = {"alice": ("ALICE_CHAT_KEY",)}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["laptop", "phone"])
def test_a_researcher_adds_and_tests_a_chat_system_by_clicking(live_server, browser, researcher, tmp_path, viewport):
    shots = screenshot_dir(tmp_path)
    size = f"{viewport['width']}"
    mobile = {"is_mobile": True, "has_touch": True} if viewport is PHONE else {}
    page = browser.new_context(viewport=viewport, **mobile).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.goto(f"{live_server.url}/surveys/")
    page.click("#chat-systems-link")
    page.wait_for_selector("#no-chat-systems")
    assert page.locator("#no-chat-systems").is_visible() and fits(page)
    page.screenshot(path=str(shots / f"chat-systems-empty-{size}.png"), full_page=True)
    page.click("#add-chat-system")
    page.wait_for_selector("#chat-system-form")  # the add page has loaded (a loaded host is slow to navigate)
    assert fits(page)
    page.screenshot(path=str(shots / f"chat-system-add-{size}.png"), full_page=True)
    with stand_in_bot("ok", delay=0.1) as bot, stand_in_bot("failing") as failing:
        page.fill("input[name=name]", "friendly-bot")
        page.fill("input[name=base_url]", bot.base_url)
        page.fill("input[name=model]", "stand-in-model-with-a-rather-long-name/Qwen2.5-7B-Instruct-GGUF")
        page.fill("textarea[name=system_prompt]", "You are a friendly partner in a casual chat. Keep replies short.")
        page.click("#chat-system-form button[type=submit]")
        page.fill("input[name=message]", "Hello! Have you been anywhere nice lately?")
        page.click("#chat-test-form button[type=submit]")
        assert "You said: Hello! Have you been anywhere nice lately?" in page.locator("#test-reply").inner_text()
        assert fits(page)
        page.screenshot(path=str(shots / f"chat-system-test-reply-{size}.png"), full_page=True)

        system = ChatSystem.objects.get(name="friendly-bot")
        system.base_url = failing.base_url
        system.save()
        page.click("#chat-test-form button[type=submit]")
        failure = page.locator("#test-failure").inner_text()
        assert "answered HTTP 500 Internal Server Error" in failure and SECRET_BODY not in page.content()
        assert fits(page)
        page.screenshot(path=str(shots / f"chat-system-test-failure-{size}.png"), full_page=True)
    page.click("text=← Chat systems")
    assert page.locator("#chat-systems").is_visible() and fits(page)
    page.screenshot(path=str(shots / f"chat-systems-list-{size}.png"), full_page=True)
    page.click("#chat-systems a")
    page.click("#remove-chat-system")
    assert fits(page)
    page.screenshot(path=str(shots / f"chat-system-remove-{size}.png"), full_page=True)
    page.click("#confirm-remove")
    assert page.locator("#no-chat-systems").is_visible()
    assert not ChatSystem.objects.exists()
