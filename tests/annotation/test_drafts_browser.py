"""Editing a draft and deleting a survey and a dataset, clicked from the home page in real headless
Chromium at 1366x900 and 390x844: every page fits its window; a BWS set across contexts is done on
a phone. Screenshots go to $SCREENSHOT_DIR when set."""

import re

import pytest

from annotation.models import Assignment, BWSJudgement, Dataset, HITItem, Survey
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.studies_helpers import make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _page(browser, window):
    if window == PHONE:
        return browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    return browser.new_context(viewport=DESKTOP).new_page()


def _login(page, live_server, user):
    page.goto(f"{live_server.url}/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("load")


def _shot(page, shots, name):
    assert fits(page), f"{name}: wider than the window"
    page.screenshot(path=str(shots / name), full_page=True)


def _open_nav(page, label):
    """The main menu's link (behind the menu button on a phone)."""
    toggle = page.locator("button.nav-toggle, #nav-toggle")
    if toggle.count() and toggle.first.is_visible():
        toggle.first.click()
    page.click(f"nav >> text={label}")
    page.wait_for_load_state("load")


@pytest.mark.parametrize("window", [DESKTOP, PHONE], ids=["1366", "390"])
def test_a_draft_is_edited_then_launched_and_the_survey_and_dataset_deleted_by_clicking(
    live_server, browser, researcher, tmp_path, window
):
    shots, size = screenshot_dir(tmp_path), window["width"]
    survey = make_survey(researcher, name="pilot", launch=False, contexts_per_hit=3)
    page = _page(browser, window)
    _login(page, live_server, researcher)
    _open_nav(page, "Surveys")
    page.click("text=pilot")
    page.click("#edit-survey")
    page.wait_for_selector("#save-draft")
    _shot(page, shots, f"drafts-edit-{size}.png")
    page.fill("input[name=contexts_per_hit]", "2")
    page.fill("input[name=name]", "pilot-2")
    page.click("#save-draft")
    page.wait_for_selector("#survey-status")
    survey.refresh_from_db()
    assert (survey.name, survey.contexts_per_hit) == ("pilot-2", 2)
    _shot(page, shots, f"drafts-detail-draft-{size}.png")
    page.click("#launch")
    page.wait_for_selector("#edit-survey-why")
    _shot(page, shots, f"drafts-detail-launched-{size}.png")
    page.click("#edit-survey-why")
    page.wait_for_selector("#edit-refused")
    assert "was launched on" in page.inner_text("#edit-refused")
    _shot(page, shots, f"drafts-edit-refused-{size}.png")
    page.click("text=Back to the survey")
    page.click("#delete-survey")
    page.wait_for_selector("#delete-rows")
    _shot(page, shots, f"drafts-delete-survey-{size}.png")
    page.click("#confirm-delete")
    page.wait_for_load_state("load")
    assert not Survey.objects.filter(pk=survey.pk).exists()
    _open_nav(page, "Datasets")
    page.click(f"text={survey.dataset.name}")
    page.click("#delete-dataset")
    page.wait_for_selector("#delete-rows")
    _shot(page, shots, f"drafts-delete-dataset-{size}.png")
    page.click("#confirm-delete")
    page.wait_for_load_state("load")
    assert not Dataset.objects.filter(pk=survey.dataset_id).exists()
    _shot(page, shots, f"drafts-after-delete-{size}.png")
    page.context.close()


def test_a_live_prolific_study_refusal_fits_a_phone(live_server, browser, researcher, tmp_path):
    from annotation.models import ProlificStudy
    from tests.annotation.prolific_helpers import make_prolific_survey

    survey = make_prolific_survey(researcher, name="paid")
    ProlificStudy.objects.filter(survey=survey).update(study_id="65f0a1b2c3", status="ACTIVE")
    shots = screenshot_dir(tmp_path)
    for window in (DESKTOP, PHONE):
        page = _page(browser, window)
        _login(page, live_server, researcher)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/")
        page.click("#delete-survey")
        page.wait_for_selector("#delete-refused")
        _shot(page, shots, f"drafts-delete-refused-{window['width']}.png")
        page.context.close()


@pytest.mark.parametrize("window", [DESKTOP, PHONE], ids=["1366", "390"])
def test_a_bws_set_across_contexts_is_done_in_the_browser(live_server, browser, researcher, tmp_path, window):
    survey = make_survey(
        researcher, name="across", task_type="bws", bws_across_contexts=True, tuple_size=4, n_contexts=4,
        contexts_per_hit=4, attention_checks_per_hit=1, assignments_per_hit=1,
    )  # fmt: skip
    page = _page(browser, window)
    page.goto(f"{live_server.url}/s/{survey.token}/")
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert "hred" not in page.content() and page.locator(".bws-across").count() >= 2
    _shot(page, screenshot_dir(tmp_path), f"drafts-bws-across-task-{window['width']}.png")
    assignment = Assignment.objects.get(status="active")
    items = list(assignment.hit.items.order_by("position"))
    for item in items:
        broken = item.tuple_responses.index(None) + 1 if None in item.tuple_responses else 4
        best = 1 if broken != 1 else 2
        page.click(f'input[name="score-{item.pk}-best"][value="{best}"] >> xpath=..')
        page.click(f'input[name="score-{item.pk}-worst"][value="{broken}"] >> xpath=..')
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    stored = BWSJudgement.objects.filter(survey=survey)
    assert stored.count() == sum(1 for item in items if item.kind == HITItem.Kind.BWS)
    assert all(j.context_id is None for j in stored)
    assert Assignment.objects.get(pk=assignment.pk).flagged is False, "the planted broken reply was picked worst"
    page.context.close()


@pytest.mark.parametrize("window", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_new_survey_form_offers_sets_across_contexts_for_best_worst_only(
    live_server, browser, researcher, tmp_path, window
):
    make_survey(researcher, name="base", launch=False)
    page = _page(browser, window)
    _login(page, live_server, researcher)
    page.goto(f"{live_server.url}/surveys/new/")
    option = page.locator('[data-field="bws_across_contexts"]')
    page.select_option("select[name=task_type]", "rate")
    assert not option.is_visible()
    page.select_option("select[name=task_type]", "bws")
    assert option.is_visible()
    option.scroll_into_view_if_needed()
    assert fits(page)
    page.screenshot(path=str(screenshot_dir(tmp_path) / f"drafts-new-survey-bws-{window['width']}.png"))
    page.context.close()
