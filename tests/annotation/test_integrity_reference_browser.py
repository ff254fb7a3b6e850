"""Issue 40 in real headless Chromium: a writing survey names its reference LLM on the survey form; one
annotator pastes what an LLM would write, another types their own reply; the quality page flags only the
pasted one as very like the reference LLM (with the sample named and the MiniLM cosine), and the reply's
page shows the same evidence. Pages at 1366x900 and 390x844, screenshots to $SCREENSHOT_DIR."""

import re

import pytest

from annotation import services
from annotation.models import WrittenResponse
from tests.annotation.browser_pages import DESKTOP, PHONE, fits, screenshot_dir
from tests.annotation.quality.test_integrity_embeddings import CONTEXT, LLM_FRESH, LLM_SAMPLES, PEOPLE
from tests.annotation.test_integrity_browser import _researcher_page, _start, _submit, minilm_loaded  # noqa: F401
from tests.factories import load_dataset_records

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_cache", "minilm_loaded"),
]


def _dataset(researcher):
    records = [
        {
            "context_id": "moving",
            "context": [CONTEXT],
            "references": ["a human reference"],
            "responses": [{"system": "llm-1", "text": LLM_SAMPLES[0]}, {"system": "llm-2", "text": LLM_SAMPLES[1]}],
        }
    ]
    return load_dataset_records(records=records, name="moving", owner=researcher)


def test_the_reply_like_the_reference_llm_is_flagged_with_its_evidence(live_server, browser, researcher, tmp_path):
    dataset = _dataset(researcher)
    shots = screenshot_dir(tmp_path)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        form = _researcher_page(browser, live_server, researcher, viewport)
        form.goto(f"{live_server.url}/surveys/new/")
        form.select_option("#id_task_type", "write")
        assert form.is_visible("#id_reference_llm_systems") and fits(form)
        form.locator("#id_reference_llm_systems").scroll_into_view_if_needed()
        form.screenshot(path=str(shots / f"integrity3-survey-form-{name}.png"))
    survey = services.survey_launch(
        survey=services.survey_create(
            dataset=dataset,
            name="moving-write",
            owner=researcher,
            task_type="write",
            write_system_name="people",
            reference_llm_systems="llm-1, llm-2",
            contexts_per_hit=1,
            assignments_per_hit=2,
        )
    )

    typist = _start(browser, live_server, survey, "typist")
    typist.click("textarea")
    typist.keyboard.type(PEOPLE[1], delay=110)  # about 9 keys a second: a quick typist, well under the bound
    _submit(typist)
    asker = _start(browser, live_server, survey, "asker", permissions=["clipboard-read", "clipboard-write"])
    asker.evaluate("text => navigator.clipboard.writeText(text)", LLM_FRESH)
    asker.click("textarea")
    asker.keyboard.press("Control+V")
    _submit(asker)
    replies = {
        w.assignment.annotator.worker_id: w for w in WrittenResponse.objects.select_related("assignment__annotator")
    }

    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page = _researcher_page(browser, live_server, researcher, viewport)
        page.goto(f"{live_server.url}/surveys/{survey.pk}/quality/")
        intro = page.inner_text("#integrity-intro")
        assert "MiniLM sentence embeddings" in intro and "reference LLM's samples for 1 context" in intro
        section = page.inner_text("#flagged-replies + ul")
        assert "asker" in section and "very like the reference LLM's reply" in section and "typist" not in section
        assert re.search(r"sample llm-[12]", section) and "raised by" in section and "embedding" in section
        assert fits(page)
        page.locator("#integrity").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"integrity3-quality-{name}.png"))
        page.locator("#flagged-replies").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"integrity3-quality-flagged-{name}.png"))
        page.click(f"#flagged-reply-{replies['asker'].pk} a")
        page.wait_for_url(f"**/written/{replies['asker'].pk}/")
        flags = page.inner_text("#reply-flags")
        assert "very like the reference LLM's reply: flag raised" in flags
        assert fits(page)
        page.screenshot(path=str(shots / f"integrity3-reply-{name}.png"), full_page=True)
