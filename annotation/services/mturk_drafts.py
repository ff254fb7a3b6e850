"""Answers given so far to an assignment open in MTurk's frame, kept on the server (MTurkDraft).

The frame's script posts the task form as the worker answers; the task page restores the latest
draft when the HIT is loaded again. Only answer fields are kept (what `parse_answers` reads), each
cut to the length the submission itself accepts, so a draft never holds more than a submission.
"""

import re

from annotation.models import Assignment, MTurkDraft
from annotation.services.assignments import parse_answers

ANSWER_FIELD = re.compile(r"^(score|seconds|text|strength|reason)-\d+(?:-[\w-]+)?$")
# The number of fields and the body's size are capped by Django for every POST, the submission's
# too (DATA_UPLOAD_MAX_NUMBER_FIELDS, DATA_UPLOAD_MAX_MEMORY_SIZE): a draft holds no more.
MAX_VALUE_CHARS = 5000  # a written reply's limit; reasons and choices are far shorter


class DraftRefused(ValueError):
    """A draft that cannot be kept (the message says why)."""


def mturk_draft_save(*, assignment, fields):
    """Keep the answer fields of `fields` (a mapping of form fields) as the assignment's draft.

    Refused once the assignment is no longer open to its worker (submitted, expired, returned):
    its answers are then stored, or no longer wanted.
    """
    if assignment.status != Assignment.Status.ACTIVE:
        raise DraftRefused("this assignment is no longer open")
    # Without NUL characters: PostgreSQL's jsonb cannot hold one (a draft is a convenience copy;
    # the submission itself refuses a reply that holds one, saying so).
    kept = {key: str(fields[key]).replace("\x00", "")[:MAX_VALUE_CHARS] for key in fields if ANSWER_FIELD.match(key)}
    MTurkDraft.objects.update_or_create(assignment=assignment, defaults={"fields": kept})


def mturk_draft_answers(*, assignment):
    """The draft's answers in `parse_answers`' shape (to fill the task page), or None."""
    draft = MTurkDraft.objects.filter(assignment=assignment).first()
    if draft is None or not draft.fields:
        return None
    return parse_answers(draft.fields)


def mturk_draft_clear(*, assignment):
    MTurkDraft.objects.filter(assignment=assignment).delete()
