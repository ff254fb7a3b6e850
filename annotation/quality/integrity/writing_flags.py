"""Flags on one written answer from its writing telemetry; each returns its numbers, not a verdict.

The telemetry of an answer is a dict (the page script collects it; missing keys count as not recorded):
  first_key_ms      from the answer box being shown to the first key or paste
  active_typing_ms  time spent typing: the sum of gaps between consecutive key presses, a gap over 2 s
                    counting as a pause, not as typing
  keystrokes        key presses that insert a character (not Backspace/Delete, arrows or modifiers)
  typed_chars       characters inserted by typing input events (optional): on a phone one tap on a
                    word suggestion inserts a whole word, so keys undercount what a person typed
  deletions         Backspace/Delete presses
  final_length      characters in the submitted text
  paste_events      paste (and drop) events; pasted_chars: the characters they inserted
  inserted_chars    characters of single insertions of several words that no paste event announced
                    (optional): a phone keyboard's clipboard chip, a text expander; counted with pasted
  focus_changes     times the page lost focus or was hidden while the answer was open
  restored_chars    characters already in the box when the page opened (kept from an earlier visit;
                    optional): the length flag counts them as explained
None of these proves LLM use: a worker may paste their own draft from a notes app. The flags say what
the telemetry shows, with the numbers, for a person to read beside the answer.
"""

from annotation.quality.integrity.evidence import Flag, share
from annotation.quality.integrity.thresholds import DEFAULTS

MOSTLY_PASTED = "mostly_pasted"
TYPED_TOO_FAST = "typed_too_fast"
LENGTH_BEYOND_TYPED = "length_beyond_typed"
TELEMETRY_FIELDS = ("first_key_ms", "active_typing_ms", "keystrokes", "typed_chars", "deletions", "final_length",
                    "paste_events", "pasted_chars", "inserted_chars", "focus_changes")


def _count(telemetry, key):
    value = telemetry.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"telemetry {key} must be a number ≥ 0, not {value!r}")
    return value


def mostly_pasted(telemetry, *, thresholds=DEFAULTS):
    final_length = _count(telemetry, "final_length")
    # A phone keyboard's clipboard chip inserts the clipboard with no paste event: as pasted here.
    inserted = _count(telemetry, "inserted_chars")
    pasted = _count(telemetry, "pasted_chars") + inserted
    # A paste may be trimmed afterwards, so pasted characters can exceed the final length: cap at 1.
    pasted_share = min(1.0, share(pasted, final_length)) if final_length else None
    raised = (final_length >= thresholds.min_chars and pasted_share is not None
              and pasted_share >= thresholds.pasted_share)
    return Flag(MOSTLY_PASTED, raised, f"pasted (or inserted at once) characters / final length ≥ "
                f"{thresholds.pasted_share} (answers of ≥ {thresholds.min_chars} characters)", {
                    "pasted_share": pasted_share,
                    "pasted_chars": pasted - inserted,
                    "inserted_chars": inserted,
                    "paste_events": _count(telemetry, "paste_events"),
                    "final_length": final_length,
                    "keystrokes": _count(telemetry, "keystrokes"),
                    "first_key_ms": telemetry.get("first_key_ms"),
                    "focus_changes": _count(telemetry, "focus_changes"),
                })


def typed_too_fast(telemetry, *, thresholds=DEFAULTS):
    keystrokes = _count(telemetry, "keystrokes")
    active_ms = _count(telemetry, "active_typing_ms")
    speed = keystrokes / (active_ms / 1000) if active_ms else None
    enough = keystrokes >= thresholds.min_keystrokes_for_speed
    # Many keys in no measurable typing time is faster than any bound.
    raised = enough and (speed is None or speed > thresholds.max_keys_per_second)
    return Flag(TYPED_TOO_FAST, raised, f"keys per second of active typing > {thresholds.max_keys_per_second} "
                f"(≥ {thresholds.min_keystrokes_for_speed} keys)", {
                    "keys_per_second": speed,
                    "keystrokes": keystrokes,
                    "active_typing_ms": active_ms,
                    "words_per_minute": speed * 60 / 5 if speed is not None else None,
                })


def length_beyond_typed(telemetry, *, thresholds=DEFAULTS):
    final_length = _count(telemetry, "final_length")
    keystrokes = _count(telemetry, "keystrokes")
    # Typed characters when recorded (they count suggestion taps fully), else keys as the best guess.
    typed_chars = _count(telemetry, "typed_chars") if telemetry.get("typed_chars") is not None else keystrokes
    pasted = _count(telemetry, "pasted_chars") + _count(telemetry, "inserted_chars")
    # Text already in the box when the page opened (kept from an earlier visit) is explained by that visit.
    restored = _count(telemetry, "restored_chars")
    explained = typed_chars + pasted + restored
    unexplained = final_length - explained
    raised = (final_length >= thresholds.min_chars and unexplained >= thresholds.unexplained_min_chars
              and final_length >= thresholds.unexplained_ratio * explained)
    return Flag(LENGTH_BEYOND_TYPED, raised, f"final length ≥ {thresholds.unexplained_ratio} × (typed + pasted "
                f"characters) and ≥ {thresholds.unexplained_min_chars} characters unexplained", {
                    "final_length": final_length,
                    "keystrokes": keystrokes,
                    "typed_chars": typed_chars,
                    "pasted_chars": pasted,
                    "restored_chars": restored,
                    "unexplained_chars": max(0, unexplained),
                    "length_per_explained_char": share(final_length, explained),
                })


TELEMETRY_DETECTORS = (mostly_pasted, typed_too_fast, length_beyond_typed)


def telemetry_flags(telemetry, *, thresholds=DEFAULTS):
    """All telemetry flags of one answer, by name. An answer without telemetry gets none (not "clean")."""
    if not telemetry:
        return {}
    return {flag.name: flag for flag in (detect(telemetry, thresholds=thresholds) for detect in TELEMETRY_DETECTORS)}


def worker_shares(flags_by_answer, worker_of):
    """Per worker, the share of their answers with each flag raised: {worker: {flag: (raised, answers)}}."""
    table = {}
    for answer, flags in flags_by_answer.items():
        counts = table.setdefault(worker_of[answer], {})
        for name, flag in flags.items():
            raised, seen = counts.get(name, (0, 0))
            counts[name] = (raised + int(flag.raised), seen + 1)
    return table
