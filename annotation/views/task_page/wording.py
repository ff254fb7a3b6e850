"""How a task is named to annotators, on RateLab's own start page and on the crowd platforms.

The words are each kind's (annotation/kinds/). One place reads them, so that a pairwise or write
survey is never advertised as a rating study: the entry pages (the survey's own, the link
platforms' and Prolific's), the task page, the no-work page, MTurk's HIT title and description,
and Prolific's study name and description all read it (templates a view gives no `wording`
through the `task_wording` filter of annotation/templatetags/task_words.py).
"""

from annotation.kinds.registry import kind_for, kind_named


def task_wording(survey):
    """`heading`, `title`, `item` (singular, plural), `verb`, `page_title`, `study` (a page heading),
    `task_title` (the task page's window title) and `answers` / `answers_lower` (what its
    annotators' answers are called on the researcher's pages) of the survey's task,
    in the words its type calls for (no query: the start page is every annotator's first)."""
    return kind_for(survey).wording


def wording_of_type(task_type):
    """The same for a task type alone (a survey being planned, not yet saved)."""
    return kind_named(task_type).wording


def task_description(survey):
    """One sentence for the platforms' listings: what an annotator does, and on what scale."""
    return kind_for(survey).describe(survey)
