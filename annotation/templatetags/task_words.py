"""`{% load task_words %}{{ survey|task_wording:"study" }}`: a template names the survey's task in
the words of annotation/task_wording.py, whichever view rendered it (the no-work page has five)."""

from django import template

from annotation.task_wording import task_wording as wording_of

register = template.Library()


@register.filter
def task_wording(survey, key):
    """One entry (`study`, `heading`, ...) of the survey's task wording."""
    return wording_of(survey)[key]
