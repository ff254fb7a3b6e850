"""The researcher's MTurk page in real headless Chromium: unconfirmed work marked, no page wider than its window.

Screenshots go to $SCREENSHOT_DIR when it is set (the reviewers' folder), else to pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest
from botocore.stub import ANY
from django.urls import reverse

from annotation.crowd.mturk.provider import MTurkProvider
from annotation.services import mturk as services
from annotation.services.assignments import assignment_submit
from tests.annotation.mturk_helpers import HIT_TYPE_ID, assignment_shape, hit_id, make_survey, publish_all
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1366, 900), "phone": (390, 844)}


def _submit(hit, *, assignment, worker):
    slot = services.mturk_assignment_open(hit=hit, assignment_id=assignment, worker_id=worker)
    answers = {item.pk: {"scores": {"overall": 2 if item.kind == "instructed" else 4}} for item in hit.items.all()}
    assignment_submit(assignment=slot, answers=answers)


@pytest.fixture
def survey(stubber, researcher):
    """Two submissions: 3ASGREAL confirmed by sync, 3FORGED (a typed task URL) unconfirmed."""
    survey = make_survey(researcher, n_hits=2, assignments=2, name="Turk pilot")
    publish_all(stubber, survey)
    _submit(survey.hits.get(position=0), assignment="3ASGREAL0000000000000000000000", worker="AREALWORKER1234567")
    _submit(survey.hits.get(position=1), assignment="3FORGED", worker="AVICTIMWORKER")
    listed = {
        **assignment_shape(0, hit=hit_id(0), worker="AREALWORKER1234567"),
        "AssignmentId": "3ASGREAL0000000000000000000000",
    }
    stubber.add_response(
        "list_reviewable_hits",
        {"NumResults": 0, "HITs": []},
        {"HITTypeId": HIT_TYPE_ID, "Status": "Reviewable", "MaxResults": 100},
    )
    for n, found in ((0, [listed]), (1, [])):
        stubber.add_response(
            "list_assignments_for_hit",
            {"NumResults": len(found), "Assignments": found},
            {"HITId": hit_id(n), "AssignmentStatuses": ANY, "MaxResults": 100},
        )
    MTurkProvider(sandbox=True).sync(survey=survey)
    return survey


def test_the_mturk_page_marks_unconfirmed_work_and_fits_desktop_and_phone(browser, live_server, survey, tmp_path):
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{live_server.url}{reverse('login')}")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.goto(f"{live_server.url}{reverse('annotation:mturk_survey', args=[survey.pk])}")
        assert page.locator("#confirmation-summary").inner_text().startswith("1 confirmed by MTurk, 1 unconfirmed")
        unconfirmed = page.locator("tr", has_text="AVICTIMWORKER").locator(".confirmation.unconfirmed")
        assert unconfirmed.is_visible()
        confirmed = page.locator("tr", has_text="AREALWORKER1234567").locator(".confirmation.confirmed")
        assert confirmed.is_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"mturk-page-{label}-full.png"), full_page=True)
        page.evaluate("document.getElementById('assignments-heading').scrollIntoView()")
        page.screenshot(path=str(shots / f"mturk-page-{label}-{width}x{height}.png"))
        # On a phone the assignments table scrolls inside its own box: show its status columns too.
        page.evaluate("document.querySelector('#assignments-heading ~ .table-scroll').scrollLeft = 320")
        page.screenshot(path=str(shots / f"mturk-page-{label}-{width}x{height}-table-scrolled.png"))
        # The survey's own page and the annotator page mark the same work (their layout is the
        # survey pages' own: at 390 px their tables were wider than the window before this change too).
        page.goto(f"{live_server.url}{reverse('annotation:survey_detail', args=[survey.pk])}")
        assert "(1 unconfirmed)" in page.locator("tr", has_text="AVICTIMWORKER").inner_text()
        assert "unconfirmed" not in page.locator("tr", has_text="AREALWORKER1234567").inner_text()
        page.screenshot(path=str(shots / f"survey-detail-{label}-{width}x{height}.png"), full_page=True)
        page.click("text=AVICTIMWORKER")
        assert "unconfirmed" in page.locator("tbody tr").first.inner_text()
        page.screenshot(path=str(shots / f"survey-annotator-{label}-{width}x{height}.png"))
        # A forged task URL: refused with a page that names the parameter.
        task = reverse("annotation:mturk_task", args=[survey.token])
        query = f"assignmentId=3ASGX&hitId={hit_id(0)}&workerId=%3Cscript%3Ealert(1)%3C/script%3E"
        refused = page.goto(f"{live_server.url}{task}?{query}")
        assert refused.status == 400
        assert "The workerId parameter is not an MTurk id" in page.locator("[role=alert]").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.screenshot(path=str(shots / f"mturk-refused-{label}-{width}x{height}.png"))
        page.close()
