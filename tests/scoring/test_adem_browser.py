"""ADEM pages and the API tokens page in real headless Chromium, at a desktop and a phone width.

Set RATELAB_SHOTS=/some/folder to keep the screenshots (the helper's review looks at them).
"""

import os
from pathlib import Path

import pytest

from scoring.models import ApiToken, TrainingRun
from scoring.services.adem.training import adem_train
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records, load_rating_records
from tests.shared_loaders import usr_personachat

pytestmark = [pytest.mark.browser, pytest.mark.shared_data, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": (1366, 900), "phone": (390, 844)}


@pytest.fixture
def study(settings, tmp_path, shared_data, researcher):
    settings.RATELAB_DATA_DIR = tmp_path
    records, ratings = usr_personachat(shared_data, include_ground_truth=False)
    dataset = load_dataset_records(records=records, name="usr-pc", owner=researcher)
    load_rating_records(records=ratings, dataset=dataset, survey_name="usr-overall", owner=researcher)
    return dataset


def _login(page, base, researcher):
    page.goto(f"{base}/scoring/adem/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_selector("h1:has-text('ADEM models')")


def _fits_and_shoot(page, name, tmp_path):
    """The page is no wider than its window; a full-page screenshot is kept where asked."""
    page.wait_for_load_state("load")
    page.wait_for_function("() => Array.from(document.images).every(img => img.complete)")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{name} is {overflow}px wider than the window"
    folder = Path(os.environ.get("RATELAB_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
def test_tokens_are_created_shown_once_and_revoked_after_confirming_in_chromium(
    live_server, browser, study, tmp_path, size
):
    researcher = study.owner
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height})
    _login(page, live_server.url, researcher)
    page.click("a:has-text('API tokens')")
    page.wait_for_url("**/scoring/adem/tokens/")
    page.fill("input[name=name]", "nightly scoring script")
    page.click("button:has-text('Create token')")
    key = page.locator("#new-key").inner_text().strip()
    assert len(key) > 30 and ApiToken.objects.filter(user=researcher).count() == 1
    _fits_and_shoot(page, f"tokens-created-{size}", tmp_path)
    page.goto(f"{live_server.url}/scoring/adem/tokens/")
    assert key not in page.content() and "never" in page.locator("tbody").inner_text()
    page.click("a:has-text('Revoke')")
    page.wait_for_url("**/revoke/")
    page.wait_for_selector("h1:has-text('Revoke token')")
    _fits_and_shoot(page, f"tokens-revoke-confirm-{size}", tmp_path)
    assert ApiToken.objects.count() == 1  # the link only asks
    page.click("button:has-text('Revoke token')")
    page.wait_for_selector("text=No tokens yet")
    assert not ApiToken.objects.exists()


def test_train_page_names_the_metric_as_typed_and_disables_the_button_once_sent(
    live_server, browser, study, researcher, tmp_path
):
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    _login(page, live_server.url, researcher)
    page.click("a:has-text('Train a model')")
    page.wait_for_url("**/scoring/adem/train/")
    page.wait_for_load_state("load")  # the page's script is attached
    help_text = page.locator("#id_name_helptext")
    assert "adem:NAME" in help_text.inner_text()
    page.fill("input[name=name]", "my-model")
    page.wait_for_function(
        "() => document.getElementById('id_name_helptext').textContent"
        " === 'Its scores become the metric adem:my-model.'"
    )
    page.select_option("select[name=dataset]", index=1)
    # Keep the form from leaving the page, so what the page does after a press can be seen.
    page.evaluate("document.querySelector('form[data-busy-text]').addEventListener('submit', e => e.preventDefault())")
    button = page.locator("form[data-busy-text] button[type=submit]").first
    button.click()
    page.wait_for_function("b => b.disabled", arg=button.element_handle())
    assert button.text_content() == "Starting training…", button.evaluate("b => b.outerHTML")


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
def test_adem_pages_fit_the_window(live_server, browser, study, tmp_path, size):
    researcher = study.owner
    model = adem_train(dataset=study, name="demo", encoder="glove", owner=researcher, config={"max_epochs": 6})
    run = TrainingRun.objects.create(  # the run page as the form's run leaves it
        kind="train", owner=researcher, adem_model=model, dataset=study, status="done", progress=model.results["curve"]
    )
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height})
    _login(page, live_server.url, researcher)
    _fits_and_shoot(page, f"adem-models-{size}", tmp_path)
    page.click("a:has-text('demo')")
    page.wait_for_url("**/scoring/adem/models/*/")
    page.wait_for_selector("h1:has-text('ADEM model demo')")
    _fits_and_shoot(page, f"adem-model-{size}", tmp_path)
    page.click("a:has-text('Train a model')")
    page.wait_for_url("**/scoring/adem/train/")
    _fits_and_shoot(page, f"adem-train-{size}", tmp_path)
    page.goto(f"{live_server.url}/scoring/adem/runs/{run.pk}/")
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=page.locator("#run-curve").element_handle()
    )
    _fits_and_shoot(page, f"adem-run-{size}", tmp_path)
    page.goto(f"{live_server.url}/scoring/datasets/{study.pk}/metrics/")
    _fits_and_shoot(page, f"metrics-{size}", tmp_path)
