"""The whole study in real headless Chromium: a researcher creates and launches a survey with the
form, two annotators (separate browser contexts) press Start and complete tasks with the keyboard, and the ratings
appear in the export."""

import json
import re

import pytest

from annotation.models import Rating
from tests.annotation.studies_helpers import dataset_records
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _rate_with_keyboard(page):
    """Press a digit per question; instructed checks get the number they ask for."""
    questions = page.eval_on_selector_all(
        "fieldset.scale", "els => els.map(f => f.closest('.task-item').querySelector('.candidate').textContent)"
    )
    assert questions, "the HIT shows questions"
    for index, text in enumerate(questions):
        asked = re.search(r"Please choose (\d)", text)
        page.keyboard.press(asked.group(1) if asked else str(2 + index % 3))
    # The page's default button: "Submit and next task" (the survey has a second task).
    assert page.evaluate("document.activeElement.id") == "submit-next", "after the last answer, focus is on Submit"
    assert page.inner_text("#answered-count") == str(len(questions))
    task = page.url
    page.keyboard.press("Enter")
    # The page's script swaps the address (history.replaceState): a same-document navigation that
    # wait_for_url sees. (A wait_for_function predicate is eval'd in the page, which its CSP refuses.)
    page.wait_for_url(lambda url: url != task)
    assert re.search(r"/a/[^/]+/$", page.url), "the next task, at its own address"


def test_researcher_creates_survey_and_two_annotators_rate_with_the_keyboard(live_server, browser, researcher):
    load_dataset_records(records=dataset_records(4, ("hred", "human")), name="tiny", owner=researcher)

    research = browser.new_context().new_page()
    research.goto(f"{live_server.url}/accounts/login/")
    research.fill("input[name=username]", researcher.username)
    research.fill("input[name=password]", PASSWORD)
    research.click("button[type=submit], input[type=submit]")
    research.goto(f"{live_server.url}/surveys/new/")
    research.select_option("#id_dataset", label="tiny")
    research.fill("#id_name", "browser study")
    research.fill("#id_contexts_per_hit", "2")
    research.fill("#id_assignments_per_hit", "2")
    research.fill("#id_attention_checks_per_hit", "1")
    research.click("#create-survey")
    research.wait_for_url(re.compile(r"/surveys/\d+/$"))
    research.click("#launch")
    assert research.inner_text("#survey-status") == "Live"
    link = research.get_attribute("#survey-link", "href")

    for worker in ("ann-one", "ann-two"):
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone-sized screen
        page.goto(f"{link}?worker={worker}")  # a label for the new identity, filled in on the start page
        assert page.input_value("#worker") == worker
        page.click("text=Start a task")
        page.wait_for_url(re.compile(r"/a/[^/]+/$"))
        assert "Instructions" in page.inner_text("main")
        assert "hred" not in page.content() and "human" not in page.inner_text("main")
        _rate_with_keyboard(page)
        assert "saved" in page.inner_text("main")
        page.context.close()

    assert Rating.objects.count() == 2 * 2 * 2
    assert set(Rating.objects.values_list("annotator__worker_id", flat=True)) == {"ann-one", "ann-two"}
    assert all(r.seconds is not None and r.seconds >= 0 for r in Rating.objects.all())

    survey_url = research.url
    exported = research.request.get(f"{survey_url}ratings.jsonl").text()
    rows = [json.loads(line) for line in exported.splitlines()]
    assert len(rows) == 8 and {r["worker"] for r in rows} == {"A1", "A2"}  # pseudonyms by default
    real = research.request.get(f"{survey_url}ratings.jsonl?ids=real").text()
    assert {json.loads(line)["worker"] for line in real.splitlines()} == {"ann-one", "ann-two"}
    assert {r["system"] for r in rows} == {"hred", "human"} and all(2 <= r["score"] <= 4 for r in rows)
    research.reload()
    assert research.inner_text("#ratings-count") == "8"
