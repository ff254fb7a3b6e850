"""What an extra rating aspect means to an annotator: a one-line definition and the labels of its scale's
points, as a researcher writes them on the survey form, one line per aspect:

    topicality: Does the reply stay on the conversation's topic? | 1 = Off topic | 5 = Fully on topic

Pure (no Django): the form parses the text with `aspect_details_parse`, the draft survey's edit page
writes it back with `aspect_details_text`, and the task page fills in `scale_ends` where none were given.
"""

import re

DEFINITION_MAX = 200  # one line on a phone: two or three lines under the question
LABEL_MAX = 40  # a scale's end, under a 1-5 row of radio buttons on a 390px screen
# Where an extra aspect has no labels of its own, its ends read like the overall question's
# ("1 = Not appropriate or sensible · 5 = Very reasonable"): never a bare scale.
DEFAULT_LOW, DEFAULT_HIGH = "Poor", "Excellent"

_LABEL = re.compile(r"^\s*(-?\d+)\s*=\s*(.*?)\s*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def scale_ends(labels, scale_min, scale_max, *, default=True):
    """The labels a scale shows: the researcher's, or Poor/Excellent at its ends when none were given."""
    if labels or not default:
        return dict(labels or {})
    return {str(scale_min): DEFAULT_LOW, str(scale_max): DEFAULT_HIGH}


def _problem_in_text(text, key, field, limit):
    if len(text) > limit:
        return f"Aspect {key!r}, {field}: {len(text)} characters; at most {limit}."
    if _CONTROL.search(text):
        return f"Aspect {key!r}, {field}: remove the tab or control character."
    return None


def _labels(parts, key, scale):
    """The labels written after the definition (`1 = Off topic`), and the problems found in them."""
    low, high = scale
    labels, problems = {}, []
    for part in parts:
        match = _LABEL.match(part)
        if not match or not match.group(2):
            shown = part.strip()[:60]
            problems.append(f"Aspect {key!r}, scale labels: write each as `{low} = Off topic`, not {shown!r}.")
            continue
        point, label = int(match.group(1)), match.group(2)
        if not low <= point <= high:
            problems.append(f"Aspect {key!r}, scale labels: {point} is not a point of its {low}-{high} scale.")
        elif str(point) in labels:
            problems.append(f"Aspect {key!r}, scale labels: {point} is labelled twice.")
        else:
            problem = _problem_in_text(label, key, f"label of {point}", LABEL_MAX)
            if problem:
                problems.append(problem)
            else:
                labels[str(point)] = label
    if labels and not problems and not {str(low), str(high)} <= set(labels):
        problems.append(
            f"Aspect {key!r}, scale labels: label both ends of the scale ({low} and {high}), "
            f"e.g. `| {low} = Off topic | {high} = Fully on topic`."
        )
    return labels, problems


def aspect_details_parse(text, scales):
    """The definitions and labels in `text`, one line per aspect, as ({key: {"definition", "scale_labels"}},
    problems). `scales`: each extra aspect's key and its (lowest, highest) point. Every problem names the
    line's aspect and the field; a caller with problems changes nothing."""
    details, problems = {}, []
    for number, line in enumerate((text or "").splitlines(), start=1):
        if not line.strip():
            continue
        key, colon, rest = line.partition(":")
        key = key.strip()
        if not colon or not key:
            problems.append(f"Line {number}: start with the aspect's name and a colon, e.g. `topicality: …`.")
            continue
        if key not in scales:
            known = ", ".join(scales) or "none"
            problems.append(
                f"Line {number}: {key[:60]!r} is not one of the survey's extra aspects ({known}); the overall "
                "question is worded in its own field."
            )
            continue
        if key in details:
            problems.append(f"Aspect {key!r} has two lines: write its definition and labels on one.")
            continue
        definition, *parts = rest.split("|")
        definition = definition.strip()
        problem = _problem_in_text(definition, key, "definition", DEFINITION_MAX)
        if problem:
            problems.append(problem)
        labels, label_problems = _labels(parts, key, scales[key])
        problems.extend(label_problems)
        details[key] = {"definition": definition, "scale_labels": labels}
    return details, problems


def aspect_details_text(aspects):
    """The lines `aspect_details_parse` reads back, for aspects (key, definition, scale_labels) that have any."""
    lines = []
    for key, definition, labels in aspects:
        if not definition and not labels:
            continue
        ends = "".join(f" | {point} = {label}" for point, label in sorted(labels.items(), key=lambda i: int(i[0])))
        lines.append(f"{key}: {definition}{ends}")
    return "\n".join(lines)
