"""The main pages in real headless Chromium under the site's Content-Security-Policy: no violation.

Every `securitypolicyviolation` event a page fires, and every console message about the policy, is
collected; a page that needs inline script or style, or loads anything from another site, fails.
"""

import re

import pytest

from annotation import services
from annotation.models import Survey
from scoring.services.metrics.compute import metrics_compute
from tests.annotation import mturk_helpers
from tests.annotation.studies_helpers import good_answers, make_survey
from tests.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs in every document before its own scripts (through the DevTools protocol, so the policy
# does not apply to it): keeps each violation the page reports.
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture
def study(researcher, settings, tmp_path, monkeypatch):
    """alice's dataset with a live survey, three annotators' ratings, BLEU-1 scores and an MTurk survey."""
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 20
    settings.ANALYSIS_CHECK_SECONDS = 0
    settings.MEDIA_ROOT = tmp_path
    survey = make_survey(researcher, name="csp-study", n_contexts=9, contexts_per_hit=3, assignments_per_hit=3)
    for worker in ("ann-1", "ann-2", "ann-3"):
        for _ in range(2):
            assignment = services.assignment_claim(survey=survey, worker_id=worker)
            services.assignment_submit(
                assignment=assignment, answers=good_answers(assignment, score=2 + len(worker) % 3)
            )
    metrics_compute(dataset=survey.dataset, metrics=["bleu1"], user=researcher)
    mturk_helpers.install_stub(monkeypatch, settings)
    turk = mturk_helpers.make_survey(researcher, n_hits=1, name="csp-turk")
    return {"survey": survey, "dataset": survey.dataset, "turk": turk}


class Watched:
    """A page whose policy violations are all kept, across navigations."""

    def __init__(self, page):
        self.page = page
        self.violations = []
        page.add_init_script(LISTEN)
        page.on("console", self._console)

    def _console(self, message):
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.violations.append(f"{self.page.url}: console: {message.text}")

    def visit(self, url, *, ready="main"):
        response = self.page.goto(url)
        assert response.status < 400, f"{url}: HTTP {response.status}"
        assert response.headers.get("content-security-policy"), f"{url}: no policy"
        self.page.wait_for_selector(ready)
        self.page.wait_for_load_state("networkidle")
        self.collect()
        return response

    def collect(self):
        found = self.page.evaluate("window.__csp || []")
        self.violations.extend(f"{self.page.url}: {v}" for v in found)
        self.page.evaluate("window.__csp = []")


def test_the_main_pages_report_no_policy_violation_in_chromium(live_server, browser, study, researcher, admin_user):
    base = live_server.url
    survey, dataset, turk = study["survey"], study["dataset"], study["turk"]

    research = Watched(browser.new_context(viewport={"width": 1366, "height": 900}).new_page())
    research.visit(f"{base}/accounts/login/")
    research.page.fill("input[name=username]", researcher.username)
    research.page.fill("input[name=password]", PASSWORD)
    research.page.click("button[type=submit]")
    research.page.wait_for_url(re.compile(r"/datasets/$"))
    research.collect()
    pages = [
        f"/datasets/{dataset.pk}/",
        f"/surveys/{survey.pk}/",
        f"/surveys/{survey.pk}/preview/",
        f"/surveys/{survey.pk}/quality/",
        f"/surveys/{turk.pk}/mturk/",
        f"/scoring/datasets/{dataset.pk}/metrics/",
        "/scoring/adem/",
        "/scoring/adem/train/",
        "/surveys/new/",
        f"/analysis/datasets/{dataset.pk}/report/",
    ]
    for path in pages:
        research.visit(base + path)
    # The report was computed in its first request (eager tasks); its plots load as images.
    research.visit(f"{base}/analysis/datasets/{dataset.pk}/report/")
    plots = research.page.locator("main img")
    assert plots.count() >= 1
    for index in range(plots.count()):
        plots.nth(index).scroll_into_view_if_needed()
    research.page.wait_for_load_state("networkidle")
    research.collect()
    research.page.context.close()

    annotator = Watched(browser.new_context(viewport={"width": 390, "height": 844}).new_page())
    annotator.visit(f"{base}/s/{survey.token}/?worker=csp-annotator")
    if annotator.page.locator("form button[type=submit]").count() and "task-form" not in annotator.page.content():
        # A start page (the link's GET claims nothing): its button leads to the task.
        annotator.page.click("form button[type=submit]")
        annotator.page.wait_for_load_state("networkidle")
        annotator.collect()
    assert annotator.page.locator("#task-form").count() == 1, "the annotator reached the task page"
    annotator.page.keyboard.press("3")  # the page's script answers with the keyboard
    annotator.collect()
    annotator.visit(f"{base}/mturk/{turk.token}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=x")
    annotator.visit(f"{base}/accounts/password_reset/")
    annotator.page.context.close()

    admin = Watched(browser.new_context(viewport={"width": 1366, "height": 900}).new_page())
    admin.visit(f"{base}/admin/login/")
    admin.page.fill("input[name=username]", "root")
    admin.page.fill("input[name=password]", PASSWORD)
    admin.page.click("input[type=submit], button[type=submit]")
    admin.page.wait_for_url(re.compile(r"/admin/$"))
    for path in ("/admin/", "/admin/annotation/dataset/", f"/admin/annotation/dataset/{dataset.pk}/change/"):
        admin.visit(base + path, ready="#content")
    admin.page.context.close()

    assert Survey.objects.filter(pk=survey.pk, status=Survey.Status.LIVE).exists()
    found = research.violations + annotator.violations + admin.violations
    assert found == [], found


def test_the_listener_does_see_a_violation(live_server, browser, researcher):
    """The control: content from another site is blocked and reported, so silence above means something."""
    watched = Watched(browser.new_context().new_page())
    watched.visit(f"{live_server.url}/accounts/login/")
    watched.page.evaluate(
        """() => new Promise((done) => {
        document.addEventListener("securitypolicyviolation", () => setTimeout(done, 50), {once: true});
        const img = document.createElement("img");
        img.src = "https://example.invalid/pixel.png";
        document.body.append(img);
        const sheet = document.createElement("div");
        sheet.setAttribute("style", "color: red");
        document.body.append(sheet);
      })"""
    )
    watched.collect()
    assert any("img-src blocked https://example.invalid/pixel.png" in v for v in watched.violations), watched.violations
    watched.page.context.close()
