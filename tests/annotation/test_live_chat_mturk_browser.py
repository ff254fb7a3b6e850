"""A live chat inside MTurk's task page in real headless Chromium at 390 px (a phone): chat.js finds
the chat at the frame's own address (the page's form has no action there) and names the assignment
by the form's MTurk fields, so the chat runs with the browser's cookies gone (a frame's third-party
cookies are often blocked); End, the final questions, and the assignment is handed back to MTurk's
externalSubmit with its assignmentId (MTurk's site answered by a route: nothing leaves the machine)."""

import re
from urllib.parse import parse_qs, urlencode

import pytest
from django.core.cache import cache
from django.urls import reverse
from playwright.sync_api import expect

from annotation.crowd.mturk import provider as mturk_module
from annotation.models import Assignment, ConversationRating, ConversationTurn, Survey
from tests.annotation.browser_pages import PHONE, fits, screenshot_dir
from tests.annotation.live_chat_helpers import chat_survey, chat_system
from tests.annotation.mturk_helpers import expect_create_hit, expect_prelude_any
from tests.stand_in_bot import stand_in_bot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture(autouse=True)
def local_bots_allowed(settings):
    settings.JUDGE_ALLOWED_HOSTS = []
    settings.JUDGE_ALLOW_PRIVATE_HOSTS = True
    cache.clear()


def test_a_turk_worker_chats_on_a_phone_and_the_hit_goes_back_to_mturk(live_server, browser, researcher, stubber,
                                                                          tmp_path):  # fmt: skip
    shots = screenshot_dir(tmp_path)
    with stand_in_bot("ok", delay=0.1) as bot:
        system = chat_system(researcher, bot.base_url, name="hidden-sys")
        survey = chat_survey(researcher, [system], name="turk-live", min_turns=2, max_turns=4, per_system=1,
                             launch=False)  # fmt: skip
        Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.MTURK)
        survey.refresh_from_db()
        expect_prelude_any(stubber)
        expect_create_hit(stubber, survey, survey.hits.get(), 0)
        mturk_module.MTurkProvider(sandbox=True).publish(survey=survey)
        Survey.objects.filter(pk=survey.pk).update(status=Survey.Status.LIVE)
        hit = survey.hits.get()
        turk = {"assignmentId": "3ASG" + "0" * 26, "hitId": hit.external_id, "workerId": "AWORKER1",
                "turkSubmitTo": SANDBOX}  # fmt: skip
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        handed_back = []

        def mturk_site(route):
            handed_back.append(route.request.post_data or "")
            route.fulfill(status=200, content_type="text/html", body="<p>MTurk got it</p>")

        context.route(f"{SANDBOX}/**", mturk_site)
        page = context.new_page()
        console = []
        page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
        page.goto(f"{live_server.url}{reverse('annotation:mturk_task', args=[survey.token])}?{urlencode(turk)}")
        page.wait_for_selector("#chat-send:not([disabled])")
        context.clear_cookies()  # what a browser blocking third-party cookies in MTurk's frame sends
        for n in (1, 2):
            page.fill("#chat-input", f"message number {n}")
            page.click("#chat-send")
            expect(page.locator("#chat-turns .bubble")).to_have_count(2 * n, timeout=15000)
            page.wait_for_selector("#chat-typing", state="hidden")
        flag = page.locator("#chat-turns .bot-turn").nth(0).locator("label", has_text="Repetitive")
        flag.click()
        expect(flag.locator("input")).to_be_checked()
        page.wait_for_timeout(300)  # the flag's POST on its way
        assert fits(page), "no sideways scrolling"
        html = page.content()
        assert "hidden-sys" not in html and bot.base_url not in html
        page.screenshot(path=str(shots / "chat-mturk-390-chatting.png"), full_page=True)
        page.click("#chat-end")
        page.wait_for_selector("#chat-final", state="visible")
        for fieldset in page.query_selector_all("#chat-final fieldset.scale"):
            fieldset.query_selector('input[value="4"]').click()
        page.screenshot(path=str(shots / "chat-mturk-390-final.png"), full_page=True)
        page.click("#submit-hit")
        page.wait_for_url(re.compile(re.escape(SANDBOX) + r"/mturk/externalSubmit"), timeout=15000)
        assert not [t for t in console if "Content Security Policy" in t or "Refused" in t], console
        context.close()
    assert len(handed_back) == 1 and parse_qs(handed_back[0])["assignmentId"] == [turk["assignmentId"]]
    slot = Assignment.objects.get(external_id=turk["assignmentId"])
    assert slot.status == Assignment.Status.SUBMITTED
    assert list(ConversationTurn.objects.order_by("index").values_list("text", flat=True)) == [
        "message number 1", "You said: message number 1", "message number 2", "You said: message number 2",
    ]  # fmt: skip
    flags = ConversationRating.objects.filter(assignment=slot, aspect="repetitive", turn__isnull=False)
    assert list(flags.order_by("turn__index").values_list("score", flat=True)) == [1, 0]
