"""An ACUTE-Eval task in real headless Chromium at 1366 and 390 px: the two conversations side by
side on a wide screen and one after the other on a phone, blind, the choice and the reason kept
across a reload, the comparisons left unanswered named on submit, and the judgements stored with
the sides shown."""

import re

import pytest

from annotation.models import Assignment, AttentionAnswer, ConversationJudgement, HITItem
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.conversation_study_helpers import SYSTEMS, make_conversation_survey

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_an_acute_task_is_done_blind_with_sides_laid_out_for_the_screen(
    live_server, browser, researcher, viewport, tmp_path
):
    survey = make_conversation_survey(researcher, task_type="acute", turns=10)
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
    first_block = page.locator(".acute-block").first
    boxes = first_block.locator(".acute-side").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.top]; })"
    )
    (left1, top1), (left2, top2) = boxes
    if phone:
        assert left1 == left2 and top2 > top1, "one after the other on a phone"
    else:
        assert top1 == top2 and left2 > left1, "side by side on a wide screen"

    assignment = Assignment.objects.get(status="active")
    items = list(HITItem.objects.filter(hit=assignment.hit).order_by("position"))
    first = items[0]
    page.click(f'input[name="score-{first.pk}-overall"][value="b"] >> xpath=..')
    page.fill(f"#reason-{first.pk}", "the second bot asks questions back")
    page.reload()
    assert page.is_checked(f'input[name="score-{first.pk}-overall"][value="b"]'), "a choice is kept across a reload"
    assert page.input_value(f"#reason-{first.pk}") == "the second bot asks questions back"

    page.click("#submit-hit")
    summary = page.inner_text("#error-summary")
    assert summary.startswith("Please answer every item: comparisons 1, 2"), summary
    shots = screenshot_dir(tmp_path)
    page.screenshot(path=str(shots / f"acute-missing-{viewport['width']}.png"), full_page=False)

    gold = next(item for item in items if item.kind == HITItem.Kind.CONV_PAIR_GOLD)
    real = "a" if gold.instructed_score == 0 else "b"
    for fieldset in page.query_selector_all("fieldset.scale"):
        if not fieldset.query_selector("input:checked"):
            item_id = fieldset.query_selector("input").get_attribute("name").split("-")[1]
            fieldset.query_selector(f'input[value="{real if item_id == str(gold.pk) else "a"}"]').click()
    first_block.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"acute-{viewport['width']}.png"), full_page=False)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    stored = ConversationJudgement.objects.filter(survey=survey, assignment=assignment)
    main = stored.get(
        conversation_a=first.conversation, conversation_b=first.conversation_b, question__startswith="Who would"
    )
    assert (main.winner, main.reason, main.position_known) == ("b", "the second bot asks questions back", True)
    assert AttentionAnswer.objects.get(assignment=assignment).passed
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()
