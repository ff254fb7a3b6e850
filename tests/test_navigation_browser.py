"""The "Done when" walk of issue 17 in real headless Chromium: from `/`, log in as the demo
researcher and, clicking links only, reach a dataset's metrics page, its correlation report and
the ADEM models page that lists the researcher's model; no page wider than a 1366 px window, and
the annotator page fits a 390 px phone.

Kept fast: the demo study is generated (load_demo's service), two cheap metrics are computed
through the real metric run, ratings are imported through the real ratings import, and the ADEM
model is a registry row (training is tested in tests/scoring; this walk is about the pages).
"""

import os
import shutil
from pathlib import Path

import pytest
from django.db import connections

from annotation import services
from annotation.models import Context, Response
from annotation.services.demo import demo_load
from scoring.models import AdemModel
from scoring.services.metrics import compute as scoring_services
from tests.annotation.studies_helpers import good_answers
from tests.factories import load_rating_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
# Set to a folder to keep a screenshot of every page the walk visits (the reviewers look at them).
SHOTS = os.environ.get("RATELAB_SHOTS_DIR")


@pytest.fixture
def page(monkeypatch):
    # Playwright's sync API keeps an event loop on this thread; the ORM calls of the fixtures
    # would otherwise be refused.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip("chromium not installed")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser.new_page(viewport=DESKTOP)
        browser.close()
        # The ORM calls made while Playwright ran leave a connection open that pytest-django does
        # not close; on PostgreSQL it would keep the test database from being dropped.
        connections.close_all()


@pytest.fixture(autouse=True)
def quick_reports(settings, tmp_path):
    settings.ANALYSIS_BOOTSTRAP_SAMPLES = 50
    settings.MEDIA_ROOT = tmp_path


def _demo_ratings(dataset, n_workers=3):
    """Import-format ratings: longer replies rated higher; the workers mostly agree (one differs by a
    point on every fourth reply), so quality control keeps them and the report has data."""
    records = []
    responses = Response.objects.filter(context__dataset=dataset).select_related("context", "system")
    for response in responses:
        base = 1 + min(len(response.text.split()), 12) // 4
        for worker in range(n_workers):
            score = max(1, min(5, base + (worker == 2 and response.pk % 4 == 0)))
            records.append(
                {
                    "context_id": response.context.external_id,
                    "system": response.system.name,
                    "worker": f"w{worker}",
                    "score": score,
                }
            )
    return records


@pytest.fixture
def demo_study():
    dataset, user, password, _ = demo_load(n_contexts=20)
    load_rating_records(records=_demo_ratings(dataset), dataset=dataset, survey_name="demo-imported", owner=user)
    run = scoring_services.metrics_compute(dataset=dataset, metrics=["bleu4", "rouge_l"], user=user)
    run.refresh_from_db()
    assert run.status == "done"  # eager Celery: computed in-process
    AdemModel.objects.create(name="demo-adem", owner=user, dataset=dataset, status=AdemModel.Status.READY)
    live = services.survey_create(dataset=dataset, name="demo-live", owner=user, contexts_per_hit=3)
    services.survey_launch(survey=live)
    # one annotator has done a HIT, so the survey lists an annotator with work to review
    assignment = services.assignment_claim(survey=live, worker_id="walker")
    services.assignment_submit(assignment=assignment, answers=good_answers(assignment))
    assert Context.objects.filter(dataset=dataset).count() == 20
    return dataset, user, password, live


def _fits(page, width, name):
    """The page is no wider than the window: nothing scrolls sideways but inside its own box."""
    page.wait_for_load_state("load")
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}-{width}.png"))
        if page.locator("ul.scores").count():  # the dataset page: its responses with scores too
            page.locator("section.context").first.scroll_into_view_if_needed()
            page.screenshot(path=str(Path(SHOTS) / f"{name}-scores-{width}.png"))
    assert scroll_width <= width, f"{name}: page is {scroll_width} px wide in a {width} px window ({page.url})"


def _click(page, selector, name):
    """Follow a link (never a typed URL) and check the page fits the window it is shown in."""
    with page.expect_navigation():
        page.locator(selector).first.click()
    _fits(page, page.viewport_size["width"], name)


def test_researcher_reaches_metrics_report_and_adem_models_by_clicking_from_home(live_server, page, demo_study):
    dataset, user, password, live = demo_study
    page.goto(f"{live_server.url}/")  # the only URL typed: everything after is a click
    _fits(page, DESKTOP["width"], "login")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", password)
    with page.expect_navigation():
        page.click("button[type=submit], input[type=submit]")
    _fits(page, DESKTOP["width"], "dataset-list")

    _click(page, f"main a:text-is('{dataset.name}')", "dataset")
    pipeline = page.locator("nav.pipeline")
    assert pipeline.locator(".step-label").all_inner_texts() == [
        "Upload",
        "Surveys",
        "Quality",
        "Metrics",
        "ADEM/judges",
        "Report",
    ]
    assert "2 metrics" in pipeline.inner_text() and "1 model ready" in pipeline.inner_text()
    assert page.locator("ul.scores").first.inner_text().startswith("BLEU-4")

    _click(page, "nav.pipeline a:has-text('Metrics')", "metrics")
    assert page.locator("h1").inner_text() == f"Automatic metrics: {dataset.name}"

    _click(page, "nav.pipeline a:has-text('Report')", "report")
    assert page.locator("h1").inner_text() == "Metric–human correlation report"
    assert page.locator("nav.pipeline a[aria-current=page]").inner_text().startswith("Report")
    page.wait_for_selector("#t-utterance_level")  # eager Celery computed the report in the request

    _click(page, "header nav a:text-is('ADEM')", "adem-models")
    assert page.locator("header nav a[aria-current=page]").inner_text() == "ADEM"
    assert page.locator("main a:text-is('demo-adem')").count() == 1

    _click(page, "header nav a:text-is('Metrics')", "metrics-index")
    _click(page, "header nav a:text-is('Reports')", "reports-index")
    _click(page, "header nav a:text-is('Quality')", "quality-index")
    _click(page, "main a:text-is('demo-imported')", "survey-quality-imported")
    _click(page, "main a:text-is('w0')", "quality-annotator")
    assert page.locator("input[type=radio][name=action]:checked").count() == 0  # no decision pre-selected
    _click(page, "header nav a:text-is('Surveys')", "survey-list")
    _click(page, f"main a:text-is('{live.name}')", "survey")
    _click(page, "#close", "survey-close-confirm")  # asks first: the survey is still live
    assert page.locator("h1").inner_text() == f"Close survey {live.name}?"
    # The confirming <button> and the cancelling link styled as one are the same height (the
    # button once took the browser's own line height: 37 px beside the link's 44).
    heights = page.eval_on_selector_all("main button, main a.button", "els => els.map(e => e.offsetHeight)")
    assert len(heights) == 2 and max(heights) - min(heights) <= 2, heights  # 2 px: the link's border
    _click(page, "main a:has-text('Cancel')", "survey")
    assert page.locator("#survey-status").inner_text() == "Live"
    _click(page, "main a:text-is('Quality control')", "survey-quality")
    _click(page, "#to-survey", "survey")
    _click(page, "main a:text-is('Preview as annotator')", "survey-preview")
    _click(page, "#preview-back", "survey")
    _click(page, f"main a:text-is('{dataset.name}')", "dataset")
    _click(page, "#surveys ~ p a:text-is('Create survey')", "survey-new")
    assert page.locator("input[type=checkbox][name=systems]").count() == 5

    # On a phone: the researcher's own pages, then the annotator's page from the survey's link.
    page.set_viewport_size(PHONE)
    _click(page, "header nav a:text-is('Datasets')", "dataset-list")
    _click(page, f"main a:text-is('{dataset.name}')", "dataset")
    _click(page, "nav.pipeline a:has-text('Quality')", "quality-index")
    _click(page, "main a:text-is('demo-imported')", "survey-quality-imported")
    _click(page, "main a:text-is('w0')", "quality-annotator")
    _click(page, "header nav a:text-is('Metrics')", "metrics-index")
    _click(page, "header nav a:text-is('Reports')", "reports-index")
    _click(page, "header nav a:text-is('Surveys')", "survey-list")
    _click(page, f"main a:text-is('{live.name}')", "survey")
    # the annotator's assignments, each with a review form whose label is visually hidden: that
    # label once sat past the page's right edge (401 px in 390), outside the table's own scroller
    _click(page, "main a:text-is('walker')", "survey-annotator")
    assert page.locator("main table input[name=reason]").count() == 1
    _click(page, f"main a:text-is('← {live.name}')", "survey")
    with page.expect_navigation():
        page.locator("#survey-link").click()
    _fits(page, PHONE["width"], "annotator-entry")
    start = page.locator("main button[type=submit], main input[type=submit]")
    if page.locator("#task-form").count() == 0 and start.count():
        # An entry page that asks the annotator to start (the link's GET claims nothing).
        with page.expect_navigation():
            start.first.click()
        _fits(page, PHONE["width"], "annotator-task")
    assert page.locator("#task-form, form").count() >= 1
