"""`{% load task_words %}{{ survey|task_wording:"study" }}`: a template names the survey's task in
the words of annotation/views/task_page/wording.py, whichever view rendered it (the no-work page has five).

`{% with kind=survey|task_kind %}`: a shared page asks the survey's kind what differs (its flags,
words and templates, annotation/kinds/base.py) instead of comparing task types by name.
"""

from django import template

from annotation.kinds.registry import kind_for
from annotation.views.task_page.wording import task_wording as wording_of

register = template.Library()


@register.filter
def task_wording(survey, key):
    """One entry (`study`, `heading`, ...) of the survey's task wording."""
    return wording_of(survey)[key]


@register.filter
def task_kind(survey):
    """The survey's kind of task (annotation/kinds/registry.py)."""
    return kind_for(survey)


@register.filter
def answers_counted(survey, n):
    """`n` answers of the survey's kind in words: "1 rating", "3 judgements", "0 written replies"."""
    one, many = kind_for(survey).answer_words
    return f"{n} {one if n == 1 else many}"


@register.filter
def quality_word(survey, key):
    """One of the quality pages' words for the survey's answers (`TaskKind.quality_words`)."""
    return kind_for(survey).quality_words[key]


@register.filter
def dataset_count(survey):
    """What the dataset page counts for `survey`: "12 ratings", "40 judgements" (`TaskKind.dataset_count`;
    the view annotates the survey with each count)."""
    attribute, word = kind_for(survey).dataset_count
    return f"{getattr(survey, attribute)} {word}"


# The sides of a pair were "reply A" and "reply B" until the page numbered them (speakers named
# "A" and "B" sat directly above them): the sentence of the old default instructions, which
# surveys made before keep, reads as the page does now.
OLD_PAIR_SIDES = "two possible next turns, reply A and reply B."
PAIR_SIDES = "two possible next turns, reply 1 and reply 2."


@register.filter
def pair_sides(instructions):
    """The survey's instructions with the old default's "reply A and reply B" as the page names them."""
    return (instructions or "").replace(OLD_PAIR_SIDES, PAIR_SIDES)


@register.filter
def recorded_note(survey):
    """What the survey's task page records besides the answers, in one sentence ("" for nothing)."""
    return kind_for(survey).recorded
