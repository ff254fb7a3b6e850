"""Training a stacked evaluator from its page in real headless Chromium, at a desktop and a phone
width: the run page follows it to the end and draws its learning curve (issue 41). The phone run
chooses int8 sentence vectors on the form, the desktop run keeps float32.

Set RATELAB_SHOTS=/some/folder to keep the screenshots."""

import pytest

from scoring.models import AdemModel, TrainingRun
from tests.scoring.test_adem_browser import SIZES, _fits_and_shoot, _login, study  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.shared_data, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("size", SIZES, ids=list(SIZES))
def test_a_stacked_evaluator_trained_from_the_page_shows_its_curve(live_server, browser, study, tmp_path, size):  # noqa: F811
    researcher = study.owner
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height})
    _login(page, live_server.url, researcher)
    page.click("a:has-text('Train a learned evaluator')")
    page.wait_for_url("**/scoring/adem/train/learned/")
    page.wait_for_load_state("load")
    page.fill("input[name=name]", "stack")
    page.wait_for_function(
        "() => document.getElementById('id_name_helptext').textContent"
        " === 'Its scores become the metric learned:stack.'"
    )
    page.select_option("select[name=dataset]", index=1)
    page.select_option("select[name=kind]", "stacked")
    page.fill("input[name=folds]", "3")
    # One width trains on int8 sentence vectors (the fastest choice), the other on the standard ones.
    precision = "int8" if width < 800 else "auto"
    page.select_option("select[name=feature_precision]", precision)
    # Eager Celery: the POST trains, and the stacked kind first encodes the responses' texts for
    # its reference-free features (MiniLM), so the click waits for that navigation as long too.
    page.get_by_role("button", name="Train", exact=True).click(timeout=120_000)
    page.wait_for_url("**/scoring/adem/runs/*/", timeout=120_000)
    page.wait_for_selector("#run-status:has-text('Done')", timeout=60_000)
    curve = page.locator("#run-curve")
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=curve.element_handle())
    assert "Final fit, epoch" in page.locator("#run-latest").inner_text()
    run = TrainingRun.objects.get(kind=TrainingRun.Kind.TRAIN_LEARNED)
    assert run.status == TrainingRun.Status.DONE and {p["fold"] for p in run.progress if p["fold"] is not None} == {
        0,
        1,
        2,
    }
    _fits_and_shoot(page, f"learned-run-{size}", tmp_path)
    page.click("#run a:has-text('stack')")
    page.wait_for_selector("h1:has-text('Learned evaluator stack')")
    assert "learned:stack" in page.content()
    assert f"feature_precision</code> = {precision}" in page.content()  # the model page says which
    assert AdemModel.objects.get(name="stack").config["feature_precision"] == precision
    # under its curve, what the curve's validation correlation is (the inner folds of the default rule)
    assert "folds by context inside the training and validation rows" in page.locator("#curve-inner-folds").inner_text()
    _fits_and_shoot(page, f"learned-model-{size}", tmp_path)
    page.click("a:has-text('ADEM models')")
    page.wait_for_selector("td:has-text('Stacked')")
    _fits_and_shoot(page, f"learned-models-{size}", tmp_path)
    assert AdemModel.objects.get(name="stack").status == AdemModel.Status.READY
    # The form's screenshot last: a full-page shot of the phone form before the press left the
    # button unresponsive to Playwright's click (the form was never sent).
    page.goto(f"{live_server.url}/scoring/adem/train/learned/")
    _fits_and_shoot(page, f"learned-train-{size}", tmp_path)
