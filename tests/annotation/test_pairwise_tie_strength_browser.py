"""In real headless Chromium: choosing "About the same" disables and clears the pair's "How much
better?" choices, choosing a side again offers them afresh, a reload keeps it so, and the submission
stores the tie without a strength. On a phone (390x844) and a desktop (1366x900), screenshots kept."""

import re

import pytest

from annotation.models import Assignment, HITItem, PairwiseJudgement
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.pairwise_helpers import make_pairwise_survey, pairwise_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _click(page, name, value):
    page.click(f'input[name="{name}"][value="{value}"] >> xpath=..')


def _strength_disabled(page, pair):
    return page.eval_on_selector_all(f'input[name="strength-{pair}"]', "els => els.map(e => e.matches(':disabled'))")


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_choosing_a_tie_disables_and_clears_the_strength_of_that_pair(live_server, browser, researcher, tmp_path, size):
    survey = make_pairwise_survey(researcher, n_contexts=2, contexts_per_hit=2, ask_strength=True)
    options = {"viewport": PHONE, "is_mobile": True, "has_touch": True} if size == "phone" else {"viewport": DESKTOP}
    context = browser.new_context(**options)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assignment = Assignment.objects.get(status="active")
    pairs = HITItem.objects.filter(hit=assignment.hit, kind="pair").order_by("position")
    tied, other = pairs.values_list("pk", flat=True)[:2]

    _click(page, f"score-{tied}-overall", "a")
    _click(page, f"strength-{tied}", "clear")
    _click(page, f"strength-{other}", "slight")
    _click(page, f"score-{tied}-overall", "tie")
    assert _strength_disabled(page, tied) == [True, True], "no strength for a tie"
    assert not page.is_checked(f'input[name="strength-{tied}"][value="clear"]'), "the strength given for A is cleared"
    assert _strength_disabled(page, other) == [False, False], "another pair is left alone"
    assert page.is_checked(f'input[name="strength-{other}"][value="slight"]')
    assert 'not asked for "About the same"' in page.inner_text(f"#item-{tied} fieldset.strength legend")
    assert fits(page), "no sideways scrolling"
    page.eval_on_selector(f"#item-{tied}", "e => e.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"pairwise-tie-strength-{size}.png"))

    page.reload()  # the answers kept in this browser: the tie comes back with its strength still off
    assert page.is_checked(f'input[name="score-{tied}-overall"][value="tie"]')
    assert _strength_disabled(page, tied) == [True, True]

    _click(page, f"score-{tied}-overall", "b")
    assert _strength_disabled(page, tied) == [False, False], "a side chosen again asks how much better"
    assert not page.is_checked(f'input[name="strength-{tied}"][value="clear"]'), "afresh, not the old answer"
    _click(page, f"score-{tied}-overall", "tie")

    answers = pairwise_answers(assignment, choose=lambda item: "tie" if item.pk == tied else "a")
    for item_id, answer in answers.items():
        for aspect, value in answer["scores"].items():
            _click(page, f"score-{item_id}-{aspect}", value)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    stored = PairwiseJudgement.objects.filter(survey=survey, aspect="overall")
    item = HITItem.objects.get(pk=tied)
    tie = stored.get(context=item.context, response_a=item.response, response_b=item.response_b)
    assert (tie.winner, tie.strength) == ("tie", "")
    item = HITItem.objects.get(pk=other)
    kept = stored.get(context=item.context, response_a=item.response, response_b=item.response_b)
    assert (kept.winner, kept.strength) == ("a", "slight")
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()
