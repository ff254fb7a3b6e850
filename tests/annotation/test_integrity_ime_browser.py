"""Writing telemetry from a phone keyboard in real headless Chromium: the DevTools protocol's input-method
events stand in for Android's (each tap a key "Unidentified", each word a composition that repeats the
whole word at every update, the clipboard chip one insertion with no paste event). A word composed
letter by letter counts its characters once, taps count as keys, and only the clipboard chip's text is
flagged mostly pasted."""

import pytest

from annotation.models import WrittenResponse
from annotation.quality.integrity.writing_flags import telemetry_flags
from tests.annotation.test_integrity_browser import _start, _submit, _writing_survey, minilm_loaded  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_cache", "minilm_loaded"),
]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
WORDS = ["Sounds", "good,", "I", "can", "bring", "snacks", "and", "a", "ball."]
CHIP = "Certainly! A picnic by the lake would be a delightful idea for everyone involved here."


def _tap_words(page, cdp, words):
    """Each letter a tap (key 'Unidentified', code 229) that grows the composition; a space commits it."""
    for word in words:
        for end in range(1, len(word) + 1):
            cdp.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Unidentified",
                                                "windowsVirtualKeyCode": 229, "nativeVirtualKeyCode": 229})
            cdp.send("Input.imeSetComposition", {"text": word[:end], "selectionStart": end, "selectionEnd": end})
            cdp.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Unidentified", "windowsVirtualKeyCode": 229})
            page.wait_for_timeout(120)  # a quick thumb: about 8 taps a second
        cdp.send("Input.insertText", {"text": word + " "})


def test_a_phone_keyboard_counts_once_and_its_clipboard_chip_is_flagged(live_server, browser, researcher):
    survey = _writing_survey(researcher)

    thumb = _start(browser, live_server, survey, "thumb", **PHONE)
    thumb.click("textarea")
    _tap_words(thumb, thumb.context.new_cdp_session(thumb), WORDS)
    typed_text = " ".join(WORDS) + " "
    assert thumb.input_value("textarea") == typed_text
    _submit(thumb)

    chip = _start(browser, live_server, survey, "chip", **PHONE)
    chip.click("textarea")
    cdp = chip.context.new_cdp_session(chip)
    _tap_words(chip, cdp, ["Well,"])
    cdp.send("Input.insertText", {"text": CHIP})  # the keyboard's clipboard chip: no paste event
    assert chip.input_value("textarea") == "Well, " + CHIP
    _submit(chip)

    stored = WrittenResponse.objects.select_related("assignment__annotator")
    replies = {w.assignment.annotator.worker_id: w for w in stored}
    typed, chipped = replies["thumb"].telemetry, replies["chip"].telemetry
    # Before: each composition update counted the whole word again ("S", "So", "Sou", ...), 3-4x the text.
    assert typed["typed_chars"] == len(typed_text)
    assert typed["keystrokes"] == sum(len(word) for word in WORDS) and typed["active_typing_ms"] > 2000
    assert typed["paste_events"] == typed["pasted_chars"] == typed["inserted_chars"] == 0
    assert chipped["inserted_chars"] == len(CHIP) and chipped["paste_events"] == 0
    assert chipped["typed_chars"] == len("Well, ")

    raised = {worker: {name for name, flag in telemetry_flags(reply.telemetry).items() if flag.raised}
              for worker, reply in replies.items()}
    assert raised == {"thumb": set(), "chip": {"mostly_pasted"}}
