"""F04/F15 in real headless Chromium at desktop and phone sizes: a failed judge's page and the
dataset's Metrics page say why (host and reason) and fit the window; a queued judging's page
updates itself (its poller, a static script under CSP) and shows the failure without a reload by hand.

Screenshots go to $SCREENSHOT_DIR when it is set, else to pytest's tmp_path.
"""

import os
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from scoring.judges import prompts
from scoring.judges.client import JudgeRequestFailed
from scoring.models import Judge, JudgeUsage
from scoring.services.judges.pairwise import judge_dataset_pairs, pairs_label
from scoring.services.metrics import compute as services
from tests.annotation.test_mturk_page_browser import SIZES
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records
from tests.scoring.judge_helpers import RECORDS
from tests.scoring.test_judges_pairwise_study import study  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def quick(settings):
    settings.JUDGE_MAX_RETRIES = 0
    settings.JUDGE_TIMEOUT_SECONDS = 5


def _shots(tmp_path):
    shots = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def _login(page, live_server):
    page.goto(f"{live_server.url}{reverse('login')}")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")


@pytest.fixture
def failed_run(researcher, dead_url):
    dataset = load_dataset_records(records=RECORDS, name="walk-study", owner=researcher)
    judge = Judge.objects.create(owner=researcher, name="qwen-local", base_url=dead_url, model="m", concurrency=1)
    with pytest.raises(JudgeRequestFailed):
        services.metrics_compute(dataset=dataset, metrics=["judge:qwen-local"])
    return dataset, judge


def test_a_failed_judge_says_why_on_its_page_and_the_metrics_page_at_desktop_and_phone_sizes(
    failed_run, dead_url, browser, live_server, tmp_path
):
    dataset, judge = failed_run
    shots = _shots(tmp_path)
    for label, (width, height) in SIZES.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        _login(page, live_server)
        page.goto(f"{live_server.url}{reverse('scoring:dataset_metrics', args=[dataset.pk])}")
        error = page.locator("#run-error").inner_text()
        assert f"cannot reach {dead_url}" in error and "3 failed, 9 not sent" in error
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        page.locator("#run-error").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"judge-failed-metrics-{label}-{width}x{height}.png"))  # the window
        page.goto(f"{live_server.url}{reverse('scoring:judge_detail', args=[judge.pk])}")
        failure = page.locator("#judge-failure").inner_text()
        assert "The run on walk-study failed" in failure and f"cannot reach {dead_url}" in failure
        assert page.locator("#judge-usage .judge-state").first.inner_text() == "failed"
        assert "No reply yet" in page.locator("#unparseable").inner_text()
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        page.screenshot(path=str(shots / f"judge-failed-page-{label}-{width}x{height}.png"), full_page=True)
        page.close()


def test_a_queued_judging_s_page_updates_itself_and_shows_the_failure(
    study,  # noqa: F811
    dead_url,
    browser,
    live_server,
    tmp_path,
):
    judge = Judge.objects.create(
        owner=study.owner, name="pair-judge", base_url=dead_url, model="local", template=prompts.PAIRWISE, concurrency=1
    )
    JudgeUsage.objects.create(judge=judge, label=pairs_label(study), queued_at=timezone.now())
    shots = _shots(tmp_path)
    width, height = SIZES["desktop"]
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    _login(page, live_server)
    page.goto(f"{live_server.url}{reverse('scoring:judge_detail', args=[judge.pk])}")
    assert "updates itself" in page.locator("#judge-live").inner_text()
    page.screenshot(path=str(shots / f"judge-queued-desktop-{width}x{height}.png"), full_page=True)
    with pytest.raises(JudgeRequestFailed):  # what the worker's task does when it takes the judging
        judge_dataset_pairs(judge=judge, dataset=study)
    page.wait_for_selector("#judge-failure", timeout=20_000)  # the poller reloaded the page
    failure = page.locator("#judge-failure").inner_text()
    assert "The judging of the pairs of ab failed" in failure and f"cannot reach {dead_url}" in failure
    assert page.locator("#judge-live").count() == 0 and not errors  # no CSP refusal, no script error
    page.screenshot(path=str(shots / f"judge-pairs-failed-desktop-{width}x{height}.png"), full_page=True)
    phone = browser.new_page(viewport=dict(zip(("width", "height"), SIZES["phone"], strict=True)))
    _login(phone, live_server)
    phone.goto(f"{live_server.url}{reverse('scoring:judge_detail', args=[judge.pk])}")
    assert phone.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    phone.screenshot(path=str(shots / "judge-pairs-failed-phone.png"), full_page=True)
