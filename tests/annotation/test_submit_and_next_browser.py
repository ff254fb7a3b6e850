"""'Submit and next task' in real headless Chromium, on a phone and a desktop: the next task comes
at its own address (a reload shows it again and posts nothing), the task before is stored and its
kept copy cleared, "Submit and stop" leads to the thank-you page, and nothing overflows."""

import re

import pytest

from annotation.models import Assignment, Rating
from tests.annotation.browser_pages import DESKTOP, PHONE, answer_all, fits, screenshot_dir
from tests.annotation.studies_helpers import make_survey

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TASK_URL = re.compile(r"/a/[^/]+/$")


def _token(url):
    return url.rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1366"])
def test_submit_and_next_then_stop(live_server, browser, researcher, size, tmp_path):
    survey = make_survey(researcher, contexts_per_hit=2, assignments_per_hit=1)
    shots = screenshot_dir(tmp_path)
    page = browser.new_context(viewport=size).new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(TASK_URL)
    first = page.url
    answer_all(page)
    kept = f"ratelab-task:{_token(first)}"
    assert page.evaluate(f"localStorage.getItem('{kept}')"), "answers are kept as they are given"
    assert page.is_visible("#submit-next") and page.is_visible("#submit-hit") and fits(page)
    page.screenshot(path=str(shots / f"submit-choices-{size['width']}.png"), full_page=True)

    page.click("#submit-next")
    page.wait_for_function(f"() => window.location.href !== {first!r}")

    second = page.url
    assert TASK_URL.search(second) and second != first, "the address bar names the next task"
    assert page.is_visible("#saved-note") and "Task 2 of at most 6" in page.inner_text(".progress")
    assert page.evaluate(f"localStorage.getItem('{kept}')") is None, "the stored task's kept copy is cleared"
    assert Assignment.objects.get(token=_token(first)).status == Assignment.Status.SUBMITTED
    assert Rating.objects.filter(assignment__token=_token(first)).exists()
    assert fits(page)
    page.screenshot(path=str(shots / f"next-task-{size['width']}.png"), full_page=True)

    page.reload()  # a plain GET of the task's own address: nothing posted again, nothing claimed
    assert page.url == second and "Task 2 of at most 6" in page.inner_text(".progress")
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2
    assert dialogs == [], "nothing submitted twice, no resubmission prompt"

    answer_all(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert "Your answers to this task are saved" in page.inner_text("body")
    assert page.is_visible("text=Do another task") and fits(page)
    assert Assignment.objects.filter(hit__survey=survey, annotator__isnull=False).count() == 2
    assert Rating.objects.filter(assignment__token=_token(second)).exists()
    page.screenshot(path=str(shots / f"stopped-{size['width']}.png"), full_page=True)
