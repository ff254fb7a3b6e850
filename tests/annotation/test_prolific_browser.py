"""A Prolific participant in real headless Chromium on a phone: from the study URL Prolific gives
out to Prolific's completion page with the right code; and the researcher's Prolific page.

Prolific's own completion page is the one outside address: Playwright's routing answers it, so
the test sees exactly where the browser was sent. Screenshots go to $SCREENSHOT_DIR when set.
"""

import datetime as dt
import re

import pytest
from django.utils import timezone

from annotation.models import Annotator, Assignment, ProlificBonus, ProlificStudy, ProlificSubmission
from tests.annotation.browser_pages import DESKTOP, PHONE, answer_all, fits, screenshot_dir
from tests.annotation.prolific_helpers import STUDY_ID, make_prolific_survey, pid, session
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(researcher):
    survey = make_prolific_survey(researcher, n_hits=2, assignments=2)
    ProlificStudy.objects.filter(survey=survey).update(study_id=STUDY_ID, status="ACTIVE")
    return ProlificStudy.objects.get(survey=survey)


def test_a_participant_walks_from_the_study_url_to_prolifics_completion_page_on_a_phone(
    live_server,
    browser,
    study,
    tmp_path,
):
    shots = screenshot_dir(tmp_path)
    page = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
    landed = []

    def prolific_site(route):
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific: submission complete</h1>")

    page.route(re.compile(r"^https://app\.prolific\.com/.*"), prolific_site)
    survey = study.survey
    url = f"{live_server.url}/p/{survey.token}/?PROLIFIC_PID={pid(1)}&STUDY_ID={STUDY_ID}&SESSION_ID={session(1)}"
    page.goto(url)
    assert not ProlificSubmission.objects.exists(), "opening the study URL claims nothing"
    assert fits(page)
    page.screenshot(path=str(shots / "prolific-entry-390x844.png"))
    page.click("text=Start")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    assert fits(page)
    page.screenshot(path=str(shots / "prolific-task-390x844.png"))
    answer_all(page)
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/done/$"))
    assert fits(page)
    page.screenshot(path=str(shots / "prolific-done-390x844.png"))
    page.click("#prolific-finish")
    page.wait_for_url(re.compile(r"^https://app\.prolific\.com/"))
    assert landed == [f"https://app.prolific.com/submissions/complete?cc={study.completed_code}"]
    row = ProlificSubmission.objects.get()
    assert (row.participant_id, row.session_id, row.confirmed) == (pid(1), session(1), False)

    desktop = browser.new_context(viewport=DESKTOP).new_page()
    desktop.goto(url)
    assert fits(desktop)
    desktop.screenshot(path=str(shots / "prolific-entry-1366x900.png"))


def test_the_researchers_prolific_page_fits_a_phone_and_a_laptop(live_server, browser, study, tmp_path):
    # One participant Prolific confirmed, with a task handed in, and one it never listed.
    for n, confirmed in ((1, True), (2, False)):
        annotator = Annotator.objects.create(provider="prolific", worker_id=pid(n))
        study.submissions.create(  # a sync that confirms a session also records its status
            session_id=session(n),
            participant_id=pid(n),
            annotator=annotator,
            confirmed=confirmed,
            status="AWAITING REVIEW" if confirmed else "",
        )
        slot = Assignment.objects.filter(hit__survey=study.survey, status="open").first()
        Assignment.objects.filter(pk=slot.pk).update(status="submitted", annotator=annotator)
    ProlificStudy.objects.filter(pk=study.pk).update(places=4)
    # Bonuses in each state the page tells apart, the longest sentences included.
    now = timezone.now()
    paid_to = study.submissions.get(confirmed=True)
    ProlificBonus.objects.create(submission=paid_to, key="a", amount_cents=25, pay_sent_at=now, paid_at=now)
    ProlificBonus.objects.create(submission=paid_to, key="b", amount_cents=40, pay_sent_at=now)
    ProlificBonus.objects.create(submission=paid_to, key="c", amount_cents=60, pay_sent_at=now - dt.timedelta(hours=3))
    shots = screenshot_dir(tmp_path)
    for label, viewport in (("1366x900", DESKTOP), ("390x844", PHONE)):
        page = browser.new_context(viewport=viewport).new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}/surveys/{study.survey.pk}/prolific/")
        assert page.is_visible("text=Reward per participant")
        assert page.inner_text("#confirmation-summary").startswith("1 of 2 participants confirmed")
        approve = page.get_by_role("button", name="Approve", exact=True)
        assert approve.count() == 1, "only confirmed work can be reviewed"
        box = approve.bounding_box()
        assert box["x"] + box["width"] <= viewport["width"], "the review buttons are on screen, not behind a scroll"
        assert "probably not paid" in page.inner_text(".bonuses >> nth=0")
        assert fits(page), f"the Prolific page is wider than {label}"
        page.screenshot(path=str(shots / f"prolific-researcher-{label}.png"), full_page=True)
        page.click("text=Exclude and block…")
        block = page.locator(".block-form")
        assert block.is_visible() and "block list on Prolific" in block.inner_text()
        assert fits(page), f"the open block form is wider than {label}"
        block.screenshot(path=str(shots / f"prolific-block-form-{label}.png"))
