"""A participant of a link-and-completion-code platform in real headless Chromium on a phone: from
the link the platform hands out to the platform's completion page with the survey's code; and the
researcher's link-platform page at laptop and phone widths.

The platform's completion page is the one outside address (reached by the completion code page's
button): Playwright's routing answers it, so the
test sees exactly where the browser was sent. Screenshots go to $SCREENSHOT_DIR when set.
"""

import re

import pytest

from annotation.crowd.link_platform import platform_settings
from annotation.models import Annotator, LinkParticipant, Survey
from tests.annotation.browser_pages import DESKTOP, PHONE, answer_all, fits, screenshot_dir
from tests.annotation.mturk_helpers import make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMPLETE = "https://connect.example.org/participant/complete?code={code}"


@pytest.fixture
def platform(researcher):
    survey = make_survey(researcher, n_hits=2, assignments=2, name="on-connect")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    survey.refresh_from_db()
    return platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)


def test_a_participant_walks_from_the_platform_link_to_its_completion_page_on_a_phone(
    live_server,
    browser,
    platform,
    tmp_path,
):
    shots = screenshot_dir(tmp_path)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    landed = []

    def platform_site(route):
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Connect: thank you</h1>")

    page.route(re.compile(r"^https://connect\.example\.org/.*"), platform_site)
    page.goto(f"{live_server.url}/l/{platform.survey.token}/?workerId=CR-000042")
    assert not LinkParticipant.objects.exists(), "opening the link claims nothing"
    assert fits(page)
    page.screenshot(path=str(shots / "link-entry-390x844.png"))
    page.click("text=Start")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page)
    answer_all(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert fits(page)
    page.screenshot(path=str(shots / "link-done-390x844.png"))
    page.click("#link-finish")
    # The code is shown on RateLab's page first (a dead completion URL must not hide it), with the way back.
    page.wait_for_url(re.compile(r"/finish/$"))
    assert page.inner_text("#completion-code") == platform.completion_code and fits(page)
    page.screenshot(path=str(shots / "link-code-390x844.png"))
    assert landed == []
    page.click("#link-return")
    page.wait_for_url(re.compile(r"^https://connect\.example\.org/"))
    assert landed == [f"https://connect.example.org/participant/complete?code={platform.completion_code}"]
    assert page.inner_text("h1") == "Connect: thank you"
    row = LinkParticipant.objects.get()
    assert (row.participant_id, row.confirmed) == ("CR-000042", False)


def test_the_researchers_link_page_is_reached_from_the_survey_page_andfits(
    live_server,
    browser,
    platform,
    tmp_path,
):
    shots = screenshot_dir(tmp_path)
    survey = platform.survey
    annotators = [("CR-000042", True), ("CR-000043", False)]
    for participant, confirmed in annotators:
        row = Annotator.objects.create(provider="link", worker_id=participant)
        LinkParticipant.objects.create(survey=survey, participant_id=participant, annotator=row, confirmed=confirmed)
    for label, viewport in (("1366x900", DESKTOP), ("390x844", PHONE)):
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}/surveys/{survey.pk}/")
        page.click("#link-platform-page")
        page.wait_for_url(re.compile(rf"/surveys/{survey.pk}/link/$"))
        assert "?workerId=" in page.inner_text("#link-entry-url")
        assert page.inner_text("#confirmation-summary").startswith("1 of 2 participants confirmed")
        assert fits(page), f"the link-platform page is wider than {label}"
        page.screenshot(path=str(shots / f"link-researcher-{label}.png"), full_page=True)


def test_a_refused_completion_url_stays_typed_beside_a_red_error_at_both_widths(live_server, browser, researcher):
    survey = make_survey(researcher, n_hits=1, assignments=1, name="on-sona")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    typed = "https://sona.example.edu/done?c="  # no {code}: refused
    for viewport in (DESKTOP, PHONE):
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}/surveys/{survey.pk}/")
        page.click("#link-platform-page")
        page.fill("input[name=completion_url]", typed)
        page.click("button[value=settings]")
        page.wait_for_load_state("load")
        assert "must contain {code} once" in page.inner_text("#settings-error")
        assert page.input_value("input[name=completion_url]") == typed
        assert page.eval_on_selector("#settings-error", "e => getComputedStyle(e).color") == "rgb(161, 19, 27)"
        assert fits(page)


def test_a_participant_who_finds_the_study_full_is_told_there_is_no_code_and_the_page_fits(
    live_server,
    browser,
    researcher,
    tmp_path,
):
    shots = screenshot_dir(tmp_path)
    survey = make_survey(researcher, n_hits=1, assignments=1, name="one-place")
    Survey.objects.filter(pk=survey.pk).update(provider=Survey.Provider.LINK)
    platform_settings(survey, participant_param="workerId", completion_url=COMPLETE)
    first = browser.new_context(viewport=PHONE).new_page()
    first.goto(f"{live_server.url}/l/{survey.token}/?workerId=CR-1")
    first.click("text=Start")
    first.wait_for_url(re.compile(r"/a/[^/]+/$"))
    answer_all(first)
    first.click("#submit-hit")
    first.wait_for_url(re.compile(r"/done/$"))
    for label, viewport in (("1366x900", DESKTOP), ("390x844", PHONE)):
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(f"{live_server.url}/l/{survey.token}/?workerId=CR-{label.replace('x', '-')}")
        page.click("text=Start")
        page.wait_for_selector("#link-no-code")
        assert page.inner_text("h1") == "No task left for you" and "completion code" in page.inner_text("#link-no-code")
        assert page.locator("a[href$='/finish/']").count() == 0
        assert fits(page), f"the study-full page is wider than {label}"
        page.screenshot(path=str(shots / f"link-study-full-{label}.png"), full_page=True)
