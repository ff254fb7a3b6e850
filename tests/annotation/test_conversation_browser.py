"""A conversation survey's task in real headless Chromium at 1366 and 390 px: blind (no system
name, conversation id or seed in the page), flags and scores kept across a reload, the
conversations left unanswered named on submit, the turns scrolling in their own box on a phone,
and the submission stored per survey with the gold conversation's plant caught."""

import re

import pytest

from annotation.models import Assignment, AttentionAnswer, ConversationRating, HITItem
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.conversation_study_helpers import SYSTEMS, make_conversation_survey

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_a_conversation_task_is_done_blind_with_answers_kept_and_missing_ones_named(
    live_server, browser, researcher, viewport, tmp_path
):
    survey = make_conversation_survey(researcher, turns=16)
    phone = viewport is PHONE
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    html = page.content()
    for hidden in (*SYSTEMS, "topic-", "meena-0", "blender-0"):
        assert hidden not in html, f"{hidden!r} in the page would unblind the study"
    assert fits(page), "no sideways scrolling"
    boxes = page.eval_on_selector_all(".conv-turns", "els => els.map(e => [e.scrollHeight, e.clientHeight])")
    scrolls = [height > shown for height, shown in boxes]
    assert all(scrolls) if phone else not any(scrolls), "the turns scroll in their own box on a phone only"

    assignment = Assignment.objects.get(status="active")
    items = list(HITItem.objects.filter(hit=assignment.hit).order_by("position"))
    first, gold = items[0], next(item for item in items if item.kind == HITItem.Kind.CONV_GOLD)
    flag = f"score-{gold.pk}-t{gold.planted_turn}-repetitive"
    page.locator(f'input[name="{flag}"]').check()
    page.click(f'input[name="score-{first.pk}-overall"][value="2"] >> xpath=..')
    page.reload()
    assert page.is_checked(f'input[name="{flag}"]'), "a ticked flag is kept across a reload"
    assert page.is_checked(f'input[name="score-{first.pk}-overall"][value="2"]'), "a score is kept across a reload"
    assert page.is_visible("#restored-note")

    page.click("#submit-hit")
    summary = page.inner_text("#error-summary")
    assert summary.startswith("Please answer every item: conversations 1, 2"), summary
    assert "replies" not in summary
    screenshot = screenshot_dir(tmp_path) / f"conversation-missing-{viewport['width']}.png"
    page.screenshot(path=str(screenshot), full_page=True)

    for fieldset in page.query_selector_all("fieldset.scale"):
        if not fieldset.query_selector("input:checked"):
            fieldset.query_selector('input[value="4"]').click()
    assert page.is_hidden("#error-summary"), "the summary goes once everything is answered"
    page.screenshot(path=str(screenshot.with_name(f"conversation-{viewport['width']}.png")), full_page=False)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    stored = ConversationRating.objects.filter(survey=survey, assignment=assignment)
    assert stored.get(conversation=first.conversation, turn=None, aspect="overall").score == 2
    assert AttentionAnswer.objects.get(assignment=assignment).passed, "the planted repetition was flagged"
    assert not stored.filter(turn__isnull=False, score=1).exists(), "only the plant was flagged, and it is not stored"
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()
