"""An extra aspect's definition and scale labels, at their longest, fit a phone's and a laptop's window
on the annotator's task page, in real headless Chromium. Screenshots go to $SCREENSHOT_DIR when set."""

import pytest

from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.studies_helpers import dataset_records, make_survey
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# 200 characters, the most a definition holds, with a long unbroken word in it.
DEFINITION = (
    "Does the reply stay on the topic the conversation is about, without drifting to something else? "
    "A reply that answers a different question is off topic, however good: see "
    "https://example.org/guidelines/topicality"
)[:200]
LOW, HIGH = "Completely off the conversation topic", "Entirely about what was being discussed"  # 40 each


@pytest.mark.parametrize("name", ["phone", "desktop"])
def test_a_long_definition_and_long_labels_fit_the_window(live_server, browser, researcher, tmp_path, name):
    viewport = PHONE if name == "phone" else DESKTOP
    assert len(DEFINITION) == 200 and len(LOW) <= 40 and len(HIGH) <= 40
    topicality = {"key": "topicality", "definition": DEFINITION, "scale_labels": {"1": LOW, "5": HIGH}}
    survey = make_survey(researcher, aspects=[topicality, "fluency"], contexts_per_hit=1, attention_checks_per_hit=0)
    mobile = {"is_mobile": True, "has_touch": True} if viewport is PHONE else {}
    page = browser.new_context(viewport=viewport, **mobile).new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/")
    with page.expect_navigation():
        page.click("text=Start a task")
    definition = page.locator(".scale-definition").first
    assert definition.is_visible() and definition.inner_text() == DEFINITION
    if viewport is PHONE:  # the phone shows the ends under the row of numbers
        assert page.locator(f".scale-ends:visible:has-text('1 = {LOW} · 5 = {HIGH}')").count() >= 1
        assert page.locator(".scale-ends:visible:has-text('1 = Poor · 5 = Excellent')").count() >= 1
    else:  # the laptop names the ends beside their numbers
        assert page.locator(f".choice-label:visible:text-is('{HIGH}')").count() >= 1
        assert page.locator(".choice-label:visible:text-is('Excellent')").count() >= 1
    page.locator(".scale-definition").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"aspect-definition-{name}.png"), full_page=True)
    assert fits(page), f"the task page is wider than the {viewport['width']} px window"


def test_the_researcher_words_the_aspects_of_a_draft_on_a_phone(live_server, browser, researcher, tmp_path):
    survey = make_survey(researcher, aspects=["topicality"], contexts_per_hit=1, launch=False)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(f"{live_server.url}/surveys/{survey.pk}/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit], input[type=submit]")
    with page.expect_navigation():
        page.click("#edit-aspects")
    assert fits(page), "the aspects page is wider than the phone"
    page.fill("textarea[name=aspect_details]", f"topicality: {DEFINITION} | 1 = {LOW} | 5 = {HIGH}")
    with page.expect_navigation():
        page.click("#save-aspects")
    assert page.locator(f"#scales :text('{DEFINITION[:60]}')").count() == 1
    page.screenshot(path=str(screenshot_dir(tmp_path) / "aspect-definition-survey-page-phone.png"), full_page=True)
    assert fits(page), "the survey page is wider than the phone"


def test_the_new_survey_form_names_the_aspect_of_a_bad_line_on_a_phone(live_server, browser, researcher, tmp_path):
    dataset = load_dataset_records(records=dataset_records(2), name="form-aspects", owner=researcher)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    page.goto(f"{live_server.url}/surveys/new/?dataset={dataset.pk}")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.click("button[type=submit], input[type=submit]")
    assert page.locator("#id_aspect_details").is_visible()
    page.select_option("#id_task_type", "pairwise")
    assert not page.locator("#id_aspect_details").is_visible()  # comparisons take no scale labels
    page.select_option("#id_task_type", "rate")
    page.fill("#id_name", "topical")
    page.fill("#id_aspects", "topicality")
    page.fill("#id_aspect_details", "topicality: On topic? | 1 = Off topic")
    with page.expect_navigation():
        page.click("#create-survey")
    summary = page.inner_text("#form-errors")
    assert "Aspect 'topicality', scale labels: label both ends of the scale (1 and 5)" in summary
    page.screenshot(path=str(screenshot_dir(tmp_path) / "aspect-definition-form-phone.png"), full_page=True)
    assert fits(page), "the survey form is wider than the phone"
