"""Questionnaire questions as a researcher writes them, and answers as a form posts them (pure).

One question a line, fields split by `|`:

    kind | key | question | options

kind: `single` (one of the options), `multi` (any of them), `scale` (1-5; options, if given,
name the two ends), `text` (a short text) or `number` (options, if given, `min-max`). key: a short
name for the export column (letters, digits, `_`). Options: separated by `;`. Every question may be
answered "prefer not to say", stored as None. Blank lines and lines starting with `#` are skipped.
"""

import math
import re

KINDS = ("single", "multi", "scale", "text", "number")
KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
MAX_QUESTIONS = 30
MAX_TEXT = 300
PREFER_NOT = "__prefer_not__"


class SpecError(ValueError):
    pass


def _number(text, where):
    try:
        return float(text)
    except ValueError:
        raise SpecError(f"{where}: {text!r} is not a number.") from None


def parse_questions(text, *, label="Questions"):
    """`[{"key", "kind", "label", "options", "min", "max"}]` from the researcher's lines, or SpecError
    saying which line is wrong and why."""
    questions, keys = [], set()
    for n, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{label}, line {n}"
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3:
            raise SpecError(
                f"{where}: write kind | key | question [| options], e.g. single | age | Your age | 18-29; 30+."
            )
        kind, key, question = parts[0].lower(), parts[1], parts[2]
        options_text = parts[3] if len(parts) > 3 else ""
        if kind not in KINDS:
            raise SpecError(f"{where}: the kind {parts[0]!r} is not one of {', '.join(KINDS)}.")
        if not KEY_RE.match(key):
            raise SpecError(f"{where}: the key {key!r} must start with a letter and hold only letters, digits and _.")
        if key in keys:
            raise SpecError(f"{where}: the key {key!r} is used twice.")
        if not question:
            raise SpecError(f"{where}: the question is empty.")
        options = [option.strip() for option in options_text.split(";") if option.strip()]
        entry = {"key": key, "kind": kind, "label": question[:MAX_TEXT], "options": [], "min": None, "max": None}
        if kind in ("single", "multi"):
            if len(options) < 2:
                raise SpecError(f"{where}: a {kind} choice question needs at least two options, separated by ;.")
            if len(set(options)) != len(options):
                raise SpecError(f"{where}: an option is given twice.")
            entry["options"] = options
        elif kind == "scale":
            if options and len(options) != 2:
                raise SpecError(f"{where}: a scale's options name its two ends (1; 5), e.g. not at all; very.")
            entry["options"] = options
        elif kind == "number" and options_text:
            bounds = options_text.split("-") if not options_text.startswith("-") else None
            if not bounds or len(bounds) != 2:
                raise SpecError(f"{where}: a number's range is written min-max, e.g. 18-99.")
            entry["min"], entry["max"] = _number(bounds[0], where), _number(bounds[1], where)
            if entry["min"] > entry["max"]:
                raise SpecError(f"{where}: the range's minimum is above its maximum.")
        keys.add(key)
        questions.append(entry)
    if len(questions) > MAX_QUESTIONS:
        raise SpecError(f"{label}: at most {MAX_QUESTIONS} questions, not {len(questions)}.")
    return questions


def questions_text(questions):
    """The lines `parse_questions` reads back into `questions` (for a form's initial value)."""
    lines = []
    for question in questions:
        options = "; ".join(question["options"])
        if question["kind"] == "number" and question["min"] is not None:
            options = f"{question['min']:g}-{question['max']:g}"
        lines.append(
            " | ".join(part for part in (question["kind"], question["key"], question["label"], options) if part)
        )
    return "\n".join(lines)


def parse_answers(questions, data):
    """`(answers, errors)` from a posted form (`data.get(name)`, `data.getlist(name)`): every
    question must be answered or marked "prefer not to say" (None). `errors` maps key -> message."""
    answers, errors = {}, {}
    for question in questions:
        key, kind = question["key"], question["kind"]
        name = f"q_{key}"
        if data.get(f"{name}_skip") == PREFER_NOT:
            answers[key] = None
            continue
        if kind == "multi":
            chosen = [value for value in data.getlist(name) if value in question["options"]]
            if not chosen:
                errors[key] = "Tick at least one option, or “Prefer not to say”."
            answers[key] = chosen
            continue
        value = (data.get(name) or "").replace("\x00", "").strip()
        if not value:
            errors[key] = "Answer this question, or tick “Prefer not to say”."
        elif kind == "single" and value not in question["options"]:
            errors[key] = "Choose one of the options."
        elif kind == "scale" and value not in ("1", "2", "3", "4", "5"):
            errors[key] = "Choose a number from 1 to 5."
        elif kind == "text" and len(value) > MAX_TEXT:
            errors[key] = f"Keep the answer under {MAX_TEXT} characters."
        elif kind == "number":
            try:
                number = float(value.replace(",", "."))
            except ValueError:
                errors[key] = "Write a number."
            else:
                if not math.isfinite(number):
                    errors[key] = "Write a number."
                elif question["min"] is not None and not question["min"] <= number <= question["max"]:
                    errors[key] = f"Write a number from {question['min']:g} to {question['max']:g}."
                else:
                    answers[key] = int(number) if number.is_integer() else number
                    continue
        if key in errors:
            answers[key] = value
            continue
        answers[key] = int(value) if kind == "scale" else value
    return answers, errors
