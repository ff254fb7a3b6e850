"""The kinds of task, by name: the one place that lists them.

Adding a kind: a package under annotation/kinds/ with a `TaskKind` subclass, a Survey.TaskType
value (a choices change, no schema change), and one line here.

Each kind is named by its dotted path and imported at its first use, as Django names its backends
in settings: a kind's package sits above the shared machinery (it uses its selectors, exports and
quality readers), while that machinery asks the kind what to do. Importing the kinds here at load
time would make every shared module that asks one import them all, and through them itself.
"""

import functools

from django.utils.module_loading import import_string

from annotation.models import Survey

KINDS = {
    Survey.TaskType.RATE: "annotation.kinds.rating.kind.RatingKind",
    Survey.TaskType.PAIRWISE: "annotation.kinds.pairwise.kind.PairwiseKind",
    Survey.TaskType.WRITE: "annotation.kinds.writing.kind.WritingKind",
    Survey.TaskType.BWS: "annotation.kinds.bws.kind.BWSKind",
    Survey.TaskType.CONVERSATION: "annotation.kinds.conversation.kind.ConversationKind",
    Survey.TaskType.ACUTE: "annotation.kinds.acute.kind.AcuteKind",
    Survey.TaskType.CHAT: "annotation.kinds.chat.kind.ChatKind",
}
# A survey of an unknown type (a row written by hand) reads as a rating survey, as it always did.
DEFAULT_KIND = Survey.TaskType.RATE


@functools.cache
def kind_named(name):
    """The kind of task type `name` (a Survey.TaskType value)."""
    return import_string(KINDS.get(name, KINDS[DEFAULT_KIND]))()


def kind_for(survey):
    """The kind of `survey`'s task."""
    return kind_named(survey.task_type)


def all_kinds():
    """Every registered kind, in the order of Survey.TaskType."""
    return [kind_named(name) for name in KINDS]


def task_types_reporting(section):
    """The task types whose kind contributes the report section named `section` (analysis's sections
    registry): a later layer selects a section's surveys by what their kind does, not by its name."""
    return [name for name in KINDS if kind_named(name).report_section == section]
