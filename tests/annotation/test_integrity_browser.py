"""Writing telemetry in real headless Chromium (issue 40): one annotator types a reply with the keyboard,
another pastes theirs from the clipboard; only the pasted one is flagged, with its evidence on the
researcher's quality page and reply page, and in `export_replies`' `integrity_flags`."""

import io
import json
import re

import pytest
from django.core.management import call_command

from annotation import services
from annotation.models import WrittenResponse
from annotation.services.extensions.points import sentence_encoder
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.studies_helpers import dataset_records
from tests.conftest import PASSWORD
from tests.factories import load_dataset_records

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_cache", "minilm_loaded"),
]


@pytest.fixture
def minilm_loaded():
    """The similarity flags' MiniLM model loaded before any page asks for it: the live server runs in this
    process, and on a busy host a first load inside a page view could outlast the page's timeout."""
    encoder = sentence_encoder()
    if encoder is not None:
        encoder(["warm up"])


TYPED = "Sounds good, I can bring snacks and a ball."  # 43 characters, typed key by key
PASTED = "Certainly! Here is a thoughtful reply: a picnic by the lake would be a delightful idea for everyone."


def _writing_survey(researcher):
    dataset = load_dataset_records(records=dataset_records(1), name="picnic", owner=researcher)
    survey = services.survey_create(
        dataset=dataset,
        name="picnic-write",
        owner=researcher,
        task_type="write",
        write_system_name="people",
        contexts_per_hit=1,
        assignments_per_hit=2,
    )
    return services.survey_launch(survey=survey)


def _start(browser, live_server, survey, worker, **context_options):
    page = browser.new_context(**context_options).new_page()
    page.goto(f"{live_server.url}/s/{survey.token}/?worker={worker}")
    note = page.inner_text("#recorded-note")
    assert "records how each reply is entered" in note and "nothing is recorded before your task begins" in note
    page.click("text=Start a task")
    page.wait_for_url(re.compile(r"/a/[^/]+/$"))
    return page


def _submit(page):
    page.click("#submit-hit")
    page.wait_for_url(re.compile(r"/a/[^/]+/done/$"))


def _researcher_page(browser, live_server, researcher, viewport):
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", researcher.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    return page


def test_only_the_pasted_reply_is_flagged_on_the_pages_and_in_the_export(live_server, browser, researcher):
    survey = _writing_survey(researcher)

    typist = _start(browser, live_server, survey, "typist")
    typist.click("textarea")
    typist.keyboard.type(TYPED, delay=110)  # about 9 keys a second: a quick typist, well under the bound
    _submit(typist)

    paster = _start(browser, live_server, survey, "paster", permissions=["clipboard-read", "clipboard-write"])
    paster.evaluate("text => navigator.clipboard.writeText(text)", PASTED)
    paster.click("textarea")
    paster.keyboard.press("Control+V")  # a real paste from the system clipboard
    assert paster.input_value("textarea") == PASTED
    _submit(paster)

    stored = WrittenResponse.objects.select_related("assignment__annotator")
    replies = {w.assignment.annotator.worker_id: w for w in stored}
    typed, pasted = replies["typist"].telemetry, replies["paster"].telemetry
    assert typed["keystrokes"] == typed["typed_chars"] == typed["final_length"] == len(TYPED)
    assert typed["paste_events"] == typed["pasted_chars"] == 0 and typed["active_typing_ms"] > 2000
    assert pasted["paste_events"] == 1 and pasted["pasted_chars"] == pasted["final_length"] == len(PASTED)
    assert pasted["keystrokes"] == 0 and pasted["restored_chars"] == 0

    page = _researcher_page(browser, live_server, researcher, DESKTOP)
    page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
    section = page.inner_text("#flagged-replies + ul")
    assert "paster" in section and "mostly pasted" in section and "pasted share 100%" in section
    assert "typist" not in section
    workers = page.inner_text("#integrity-workers")
    assert "mostly pasted: 1 of 1" in workers
    assert "cheat" not in page.inner_text("main").lower()
    assert fits(page)
    page.goto(f"{live_server.url}/surveys/{survey.pk}/written/")
    marks = page.eval_on_selector_all(".reply-integrity", "els => els.map(e => e.textContent)")
    assert sorted(marks) == ["Flags: mostly pasted · telemetry and integrity flags", "telemetry and integrity flags"]
    assert fits(page)
    page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
    page.click(f"#flagged-reply-{replies['paster'].pk} a")
    page.wait_for_url(f"**/written/{replies['paster'].pk}/")
    telemetry = page.inner_text("#telemetry-table")
    assert f"Characters pasted\t{len(PASTED)}" in telemetry and "Pastes and drops\t1" in telemetry
    assert "mostly pasted: flag raised" in page.inner_text("#reply-flags")

    page.goto(f"{live_server.url}/surveys/{survey.pk}/written/{replies['typist'].pk}/")
    assert "flag raised" not in page.inner_text("#reply-flags")
    assert f"Keys that insert a character\t{len(TYPED)}" in page.inner_text("#telemetry-table")

    out = io.StringIO()
    call_command("export_replies", "--survey", survey.name, "--real-ids", stdout=out, stderr=io.StringIO())
    flags = {r["worker"]: r["integrity_flags"] for r in map(json.loads, out.getvalue().splitlines())}
    assert flags == {"typist": [], "paster": ["mostly_pasted"]}


def test_integrity_pages_fit_a_phone_and_a_desktop(live_server, browser, researcher, tmp_path):
    """The start page, the quality page's Integrity section, the written replies list and a reply's page
    at 1366 and 390 wide."""
    survey = _writing_survey(researcher)
    paster = _start(browser, live_server, survey, "paster", permissions=["clipboard-read", "clipboard-write"])
    paster.evaluate("text => navigator.clipboard.writeText(text)", PASTED)
    paster.click("textarea")
    paster.keyboard.press("Control+V")
    _submit(paster)
    written = WrittenResponse.objects.get()
    shots = screenshot_dir(tmp_path)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        start = browser.new_context(viewport=viewport).new_page()
        start.goto(f"{live_server.url}/s/{survey.token}/")
        assert start.is_visible("#recorded-note") and fits(start)
        start.screenshot(path=str(shots / f"integrity-start-{name}.png"), full_page=True)
        page = _researcher_page(browser, live_server, researcher, viewport)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
        assert page.is_visible("#integrity") and fits(page)
        page.locator("#integrity").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"integrity-quality-{name}.png"), full_page=True)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/written/")
        assert "Flags: mostly pasted" in page.inner_text(".reply-integrity") and fits(page)
        page.screenshot(path=str(shots / f"integrity-written-list-{name}.png"), full_page=True)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/written/{written.pk}/")
        assert page.is_visible("#telemetry-table") and fits(page)
        page.screenshot(path=str(shots / f"integrity-reply-{name}.png"), full_page=True)


def test_a_rating_surveys_integrity_section_shows_the_ordinal_competence_at_both_widths(
    live_server, browser, researcher, tmp_path
):
    """A 1-5 rating survey: the Integrity table gains the ordinal model's column, which the rule sentence
    names, and still fits 1366 and 390 wide."""
    from annotation.quality.recompute import quality_recompute
    from tests.annotation.studies_helpers import rated_by_two_careful_raters_and_a_straight_liner

    survey = rated_by_two_careful_raters_and_a_straight_liner(researcher, min_competence=0.5)
    quality_recompute(survey=survey)
    shots = screenshot_dir(tmp_path)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = _researcher_page(browser, live_server, researcher, viewport)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
        assert "Competence (ordinal model)" in page.inner_text("#integrity-workers")
        assert "competence (ordinal spammer model) is below 0.5" in page.inner_text("#integrity-rules")
        assert fits(page)
        page.locator("#integrity").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"integrity-ordinal-{name}.png"), full_page=True)
