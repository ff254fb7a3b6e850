"""`{% load worker_names %}{{ annotator|worker_name:worker_names }}`: a page names a worker as its
reader may see them, by the `worker_names` its view got from `annotation.selectors.worker_names`
(the real id for the study's owner, the dataset pseudonym for staff and admins)."""

from django import template

register = template.Library()


@register.filter
def worker_name(annotator, names):
    """The annotator's name for this reader. A view that forgot `worker_names` fails loudly here
    rather than falling back to the real id."""
    return names.of(annotator)


@register.filter
def worker_text(text, names):
    """A person's free text (a review's reason) with the workers it names as this reader may see them."""
    return names.text(text)
