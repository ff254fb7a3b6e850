"""Telemetry flags: each raised or not by the documented rule, with its numbers as evidence."""

import pytest

from annotation.quality.integrity.thresholds import DEFAULTS, Thresholds
from annotation.quality.integrity.writing_flags import (
    LENGTH_BEYOND_TYPED,
    MOSTLY_PASTED,
    TYPED_TOO_FAST,
    length_beyond_typed,
    mostly_pasted,
    telemetry_flags,
    typed_too_fast,
    worker_shares,
)

TYPED = {"first_key_ms": 4_000, "active_typing_ms": 60_000, "keystrokes": 330, "typed_chars": 330,
         "deletions": 30, "final_length": 300, "paste_events": 0, "pasted_chars": 0, "focus_changes": 0}
PASTED = {"first_key_ms": 41_000, "active_typing_ms": 1_500, "keystrokes": 12, "typed_chars": 12,
          "deletions": 2, "final_length": 400, "paste_events": 1, "pasted_chars": 395, "focus_changes": 2}


def test_a_typed_answer_raises_no_flag():
    flags = telemetry_flags(TYPED)
    assert set(flags) == {MOSTLY_PASTED, TYPED_TOO_FAST, LENGTH_BEYOND_TYPED}
    assert not any(f.raised for f in flags.values())
    # 330 keys in 60 s: 5.5 keys/s, 66 words a minute.
    assert flags[TYPED_TOO_FAST].evidence["keys_per_second"] == pytest.approx(5.5)
    assert flags[TYPED_TOO_FAST].evidence["words_per_minute"] == pytest.approx(66.0)


def test_a_pasted_answer_is_flagged_with_its_share_and_context():
    flag = mostly_pasted(PASTED)
    assert flag.raised
    assert flag.evidence["pasted_share"] == pytest.approx(395 / 400)
    assert flag.evidence["paste_events"] == 1
    assert flag.evidence["first_key_ms"] == 41_000 and flag.evidence["focus_changes"] == 2
    assert "0.5" in flag.rule


def test_pasted_share_is_capped_when_a_paste_was_trimmed_afterwards():
    flag = mostly_pasted({**PASTED, "pasted_chars": 900})
    assert flag.evidence["pasted_share"] == 1.0


def test_the_pasted_share_threshold_is_inclusive_and_short_answers_are_not_judged():
    half = {"final_length": 100, "pasted_chars": 50}
    assert mostly_pasted(half).raised
    assert not mostly_pasted({"final_length": 100, "pasted_chars": 49}).raised
    assert not mostly_pasted({"final_length": DEFAULTS.min_chars - 1, "pasted_chars": DEFAULTS.min_chars - 1}).raised
    assert not mostly_pasted(half, thresholds=Thresholds(pasted_share=0.6)).raised


def test_key_events_faster_than_a_person_types_are_flagged():
    # 400 keys in 10 s = 40 keys/s, far beyond the 15 keys/s bound.
    flag = typed_too_fast({"keystrokes": 400, "active_typing_ms": 10_000})
    assert flag.raised and flag.evidence["keys_per_second"] == pytest.approx(40.0)
    # Exactly at the bound is not beyond it; a short burst is not judged.
    assert not typed_too_fast({"keystrokes": 150, "active_typing_ms": 10_000}).raised
    assert not typed_too_fast({"keystrokes": 39, "active_typing_ms": 100}).raised


def test_many_keys_in_no_measurable_typing_time_are_flagged_without_a_speed():
    flag = typed_too_fast({"keystrokes": 200, "active_typing_ms": 0})
    assert flag.raised and flag.evidence["keys_per_second"] is None


def test_text_that_neither_keys_nor_pastes_explain_is_flagged():
    # 5 keys, no paste, 300 characters: 295 characters came from somewhere else (a script).
    flag = length_beyond_typed({"keystrokes": 5, "final_length": 300})
    assert flag.raised
    assert flag.evidence["unexplained_chars"] == 295
    assert flag.evidence["length_per_explained_char"] == pytest.approx(60.0)


def test_phone_suggestions_count_through_typed_characters_not_keys():
    # A phone typist: 180 taps inserted 300 characters (suggestions fill whole words).
    phone = {"keystrokes": 180, "typed_chars": 300, "final_length": 280}
    assert not length_beyond_typed(phone).raised
    # Without `typed_chars` the keys are the best guess, and 280 ≥ 1.5 × 180 = 270: the same answer would
    # be flagged, which is why the page script should record typed characters.
    assert length_beyond_typed({"keystrokes": 180, "final_length": 280}).raised
    assert not length_beyond_typed({"keystrokes": 190, "final_length": 280}).raised


def test_pasted_characters_explain_length():
    assert not length_beyond_typed({"keystrokes": 10, "pasted_chars": 290, "final_length": 300}).raised


def test_answers_without_telemetry_get_no_flags_and_bad_values_are_refused():
    assert telemetry_flags({}) == {}
    assert telemetry_flags(None) == {}
    with pytest.raises(ValueError, match="keystrokes"):
        typed_too_fast({"keystrokes": -3})
    with pytest.raises(ValueError, match="final_length"):
        mostly_pasted({"final_length": "300"})


def test_evidence_is_plain_json():
    import json

    for flag in telemetry_flags(PASTED).values():
        json.dumps(flag.as_dict())


def test_worker_shares_count_raised_flags_per_worker():
    flags = {"r1": telemetry_flags(PASTED), "r2": telemetry_flags(TYPED), "r3": telemetry_flags(PASTED)}
    table = worker_shares(flags, {"r1": "a", "r2": "a", "r3": "b"})
    assert table["a"][MOSTLY_PASTED] == (1, 2)
    assert table["b"][MOSTLY_PASTED] == (1, 1)
    assert table["a"][TYPED_TOO_FAST] == (0, 2)


def test_text_inserted_at_once_without_a_paste_event_counts_as_pasted():
    # A phone keyboard's clipboard chip inserts 300 characters with no paste event: 300 of 320 is 94%.
    chip = {**TYPED, "keystrokes": 20, "typed_chars": 20, "inserted_chars": 300, "final_length": 320}
    flag = mostly_pasted(chip)
    assert flag.raised
    assert flag.evidence["pasted_share"] == pytest.approx(300 / 320)
    assert flag.evidence["inserted_chars"] == 300 and flag.evidence["pasted_chars"] == 0
    # ... and they explain the reply's length: it is not "beyond what was typed".
    assert not length_beyond_typed(chip).raised
