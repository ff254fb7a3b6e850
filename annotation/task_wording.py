"""How a task is named to annotators, on RateLab's own start page and on the crowd platforms.

One place, so that a pairwise or write survey is never advertised as a rating study: the entry
pages (the survey's own, the link platforms' and Prolific's), the task page, the no-work page,
MTurk's HIT title and description, and Prolific's study name and description all read it
(templates a view gives no `wording` through the `task_wording` filter of
annotation/templatetags/task_words.py).
"""

from annotation.models import Survey

_WORDING = {
    Survey.TaskType.RATE: {
        "heading": "Rate replies to conversations",
        "title": "Rate replies in short conversations",
        "item": ("reply", "replies"),
        "verb": "rate",
        "page_title": "Join a rating study",
        "study": "Rating study",
        "task_title": "Rating task",
        "answers": "Ratings",
        "answers_lower": "ratings",
    },
    Survey.TaskType.PAIRWISE: {
        "heading": "Compare replies to conversations",
        "title": "Compare replies in short conversations",
        "item": ("pair of replies", "pairs of replies"),
        "verb": "compare",
        "page_title": "Join a comparison study",
        "study": "Comparison study",
        "task_title": "Comparison task",
        "answers": "Judgements",
        "answers_lower": "judgements",
    },
    Survey.TaskType.WRITE: {
        "heading": "Write replies to conversations",
        "title": "Write replies in short conversations",
        "item": ("reply", "replies"),
        "verb": "write",
        "page_title": "Join a writing study",
        "study": "Writing study",
        "task_title": "Writing task",
        "answers": "Written replies",
        "answers_lower": "written replies",
    },
}


def task_wording(survey):
    """`heading`, `title`, `item` (singular, plural), `verb`, `page_title`, `study` (a page heading),
    `task_title` (the task page's window title) and `answers` / `answers_lower` (what its
    annotators' answers are called on the researcher's pages) of the survey's task,
    in the words its type calls for (no query: the start page is every annotator's first)."""
    return wording_of_type(survey.task_type)


def wording_of_type(task_type):
    """The same for a task type alone (a survey being planned, not yet saved)."""
    return _WORDING.get(task_type, _WORDING[Survey.TaskType.RATE])


def task_description(survey):
    """One sentence for the platforms' listings: what an annotator does, and on what scale."""
    if survey.task_type == Survey.TaskType.PAIRWISE:
        what = "Read short conversations and choose the better of two candidate replies"
        what += ", or say they are about the same." if survey.allow_tie else "."
    elif survey.task_type == Survey.TaskType.WRITE:
        what = "Read short conversations and write a fitting next reply to each."
    else:
        what = f"Read short conversations and judge how appropriate each candidate reply is{_scale(survey)}."
    return what


def _scale(survey):
    """ ", on a 1-5 scale" when every question of the survey has that scale (unsaved surveys: 1-5)."""
    if survey.pk is None:
        return ", on a 1-5 scale"
    scales = set(survey.aspects.values_list("scale_min", "scale_max"))
    if len(scales) != 1:
        return ""
    low, high = scales.pop()
    return f", on a {low}-{high} scale"
