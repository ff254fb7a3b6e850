"""How the researcher's pages show integrity flags and writing telemetry: labelled, rounded numbers.

Flags are evidence for a person to read beside the answer, never a verdict: the words here say what
was measured ("pasted share 100%"), not what anyone is."""

from annotation.kinds.writing.telemetry import FIELDS

TELEMETRY_LABELS = {
    "first_key_ms": "Time to the first key or paste",
    "active_typing_ms": "Active typing time (pauses over 2 s left out)",
    "keystrokes": "Keys that insert a character",
    "typed_chars": "Characters typed",
    "deletions": "Deletions (Backspace, Delete)",
    "final_length": "Characters in the reply",
    "paste_events": "Pastes and drops",
    "pasted_chars": "Characters pasted",
    "inserted_chars": "Characters inserted at once without a paste (a keyboard's clipboard, a text expander)",
    "focus_changes": "Times the page was left while answering",
    "restored_chars": "Characters restored from an earlier visit",
}
# Evidence keys that name another row, not a measure: shown apart (the other reply gets a link).
REFERENCES = {"other_answer", "other_worker", "other_first", "hurried_positions"}


def number_text(key, value):
    """One measure as the page prints it: milliseconds as seconds, shares as percentages."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_ms"):
        return f"{value / 1000:.1f} s"
    if key.endswith("_share"):
        return f"{value:.0%}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def evidence_rows(evidence):
    """A flag's evidence as (label, text) pairs, measures only (and which of them crossed a threshold)."""
    rows = [(key.removesuffix("_ms").replace("_", " "), number_text(key, value)) for key, value in evidence.items()
            if key not in REFERENCES and not isinstance(value, list | dict)]
    if evidence.get("raised_by"):
        rows.append(("raised by", ", ".join(str(name) for name in evidence["raised_by"])))
    return rows


def flag_display(flag):
    """A flag of the cached report (`integrity_report._flag_out`) with its evidence ready to print."""
    return {**flag, "rows": evidence_rows(flag["evidence"])}


def telemetry_rows(telemetry):
    """A reply's stored telemetry as (label, text) pairs, in the page script's order."""
    if not telemetry:
        return []
    return [(TELEMETRY_LABELS[key], number_text(key, telemetry[key])) for key in FIELDS if key in telemetry]


def integrity_display(section, *, max_rows):
    """The report's integrity section as the quality page shows it (None when the report has none)."""
    if not section:
        return None
    workers = section["workers"][:max_rows]
    for worker in workers:
        worker["rating_flags_shown"] = [flag_display(flag) for flag in worker["rating_flags"]]
    replies = [{**reply, "flags_shown": [flag_display(flag) for flag in reply["flags"]]}
               for reply in section["flagged_replies"][:max_rows]]
    return {**section, "workers_shown": workers, "replies_shown": replies,
            "more_workers": max(0, len(section["workers"]) - max_rows),
            "more_replies": max(0, len(section["flagged_replies"]) - max_rows)}
