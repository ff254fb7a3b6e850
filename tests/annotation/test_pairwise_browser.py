"""A pairwise HIT rated in real headless Chromium on a phone (390x844): the two replies stacked,
no sideways scrolling, no CSP errors, the keyboard shortcut, the optional reason kept across a
reload, and the submission stored as judgements with the sides shown."""

import re

import pytest

from annotation.models import Assignment, HITItem, PairwiseJudgement
from tests.annotation.browser_pages import fits
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}


def test_a_pairwise_hit_is_rated_on_a_phone(live_server, browser, researcher):
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, ask_reason=True, ask_strength=True)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page), "no sideways scrolling on a phone"
    sides = page.eval_on_selector_all(".pair .pair-side", "els => els.map(e => e.getBoundingClientRect().left)")
    assert len(set(sides)) == 1, "on a phone the two replies are stacked, not side by side"
    assert "hred" not in page.content() and "tfidf" not in page.content()
    assert page.is_hidden(".keyboard-hint"), "no keys to press on a touch screen"

    assignment = Assignment.objects.get(status="active")
    answers = pairwise_answers(assignment, choose=lambda item: "b")
    first_pair = next(pk for pk in answers if HITItem.objects.get(pk=pk).kind == "pair")
    page.fill(f"#reason-{first_pair}", "B stays on topic")
    page.click(f'input[name="strength-{first_pair}"][value="clear"] >> xpath=..')
    page.reload()
    assert page.input_value(f"#reason-{first_pair}") == "B stays on topic", "the reason is kept across a reload"

    page.focus(f'input[name="score-{first_pair}-overall"][value="a"]')
    page.keyboard.press("2")
    assert page.is_checked(f'input[name="score-{first_pair}-overall"][value="b"]'), "2 chooses B"
    page.click("#submit-hit")  # the rest unanswered: named as pairs (there is no "reply 5" on this page)
    summary = page.inner_text("#error-summary")
    assert summary.startswith("Please answer every item: pairs ") and "replies" not in summary, summary
    for item_id, answer in answers.items():
        for aspect, value in answer["scores"].items():
            page.click(f'input[name="score-{item_id}-{aspect}"][value="{value}"] >> xpath=..')
    total = len(answers)
    assert page.inner_text("#answered-count") == str(total)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    stored = PairwiseJudgement.objects.filter(survey=survey)
    assert stored.count() == 2 * 6 and set(stored.values_list("winner", flat=True)) == {"b"}
    item = HITItem.objects.get(pk=first_pair)
    chosen = stored.get(response_a=item.response, response_b=item.response_b)
    assert (chosen.reason, chosen.strength) == ("B stays on topic", "clear")
    assert Assignment.objects.get(pk=assignment.pk).flagged is False, "gold and repeat passed"
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()
