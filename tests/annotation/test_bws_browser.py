"""A best-worst HIT done in real headless Chromium on a phone (390x844): the sets fit the screen
without sideways scrolling, no system names, the reply picked best cannot be picked worst (its
button disabled, a key press on it ignored), picks kept across a reload, missing sets named, and the
submission stored as judgements with the tuple in shown order. Screenshots go to $BWS_SHOTS when set."""

import io
import os
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Assignment, BWSJudgement, HITItem
from tests.annotation.browser_pages import fits
from tests.annotation.bws_helpers import bws_answers, make_bws_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}


def _shot(page, name):
    folder = os.environ.get("BWS_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _radio(item_id, key, value):
    return f'input[name="score-{item_id}-{key}"][value="{value}"]'


def test_a_bws_hit_is_done_on_a_phone(live_server, browser, researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page), "no sideways scrolling on a phone"
    for name in ("hred", "tfidf", "seq2seq", "retrieval"):
        assert name not in page.content()
    _shot(page, "bws-task-390.png")

    assignment = Assignment.objects.get(status="active")
    answers = bws_answers(assignment, pick=lambda item: (1, 4))
    first = next(pk for pk in answers if HITItem.objects.get(pk=pk).kind == HITItem.Kind.BWS)
    page.click(_radio(first, "best", "2") + " >> xpath=..")
    assert page.is_disabled(_radio(first, "worst", "2")), "the reply picked best cannot be picked worst"
    page.focus(_radio(first, "worst", "1"))
    page.keyboard.press("2")  # the key of the reply already picked best: ignored
    assert not page.is_checked(_radio(first, "worst", "2"))
    page.click(_radio(first, "worst", "3") + " >> xpath=..")
    assert page.is_disabled(_radio(first, "best", "3"))
    page.reload()
    assert page.is_checked(_radio(first, "best", "2")) and page.is_checked(_radio(first, "worst", "3")), "kept"
    assert page.is_disabled(_radio(first, "worst", "2")), "the rule holds for restored picks too"

    page.click("#submit-hit")  # the other sets unanswered: named as sets
    summary = page.inner_text("#error-summary")
    assert summary.startswith("Please answer every item: sets ") and "replies" not in summary, summary
    _shot(page, "bws-task-missing-390.png")
    for item_id, answer in answers.items():
        if item_id == first:
            continue
        for key in ("best", "worst"):
            page.click(_radio(item_id, key, answer["scores"][key]) + " >> xpath=..")
    assert page.inner_text("#answered-count") == str(2 * len(answers))
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    item = HITItem.objects.get(pk=first)
    judgement = BWSJudgement.objects.get(item=item)
    assert judgement.responses == item.tuple_responses
    assert (judgement.best_id, judgement.worst_id) == (item.tuple_responses[1], item.tuple_responses[2])
    assert BWSJudgement.objects.filter(survey=survey).count() == sum(
        1 for pk in answers if HITItem.objects.get(pk=pk).kind == HITItem.Kind.BWS
    )
    assert Assignment.objects.get(pk=assignment.pk).flagged is False, "the gold tuple passed"
    assert not [text for text in console if "Content Security Policy" in text or "Refused" in text], console
    context.close()


def test_the_bws_page_fits_a_desktop(live_server, browser, researcher):
    survey = make_bws_survey(researcher, n_contexts=2, contexts_per_hit=2)
    page = browser.new_page(viewport=DESKTOP)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page)
    assert page.is_visible(".keyboard-hint")
    _shot(page, "bws-task-1366.png")
    page.close()


@pytest.mark.parametrize("window", [(1366, 900), (390, 844)])
def test_the_report_shows_the_bws_section_within_the_window(live_server, browser, researcher, settings, window):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    survey = make_bws_survey(researcher, n_contexts=4, contexts_per_hit=2, assignments_per_hit=2, name="rep")
    call_command("simulate_ratings", survey.name, "--annotators", "4", stdout=io.StringIO())
    width, height = window
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{live_server.url}/analysis/datasets/{survey.dataset.pk}/report/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("#t-bws")
    page.wait_for_load_state("load")
    rows = page.locator("section[aria-labelledby=t-bws] tbody tr")
    assert rows.count() >= 6
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.locator("#t-bws").scroll_into_view_if_needed()
    _shot(page, f"bws-report-{width}.png")
    page.close()
