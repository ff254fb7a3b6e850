"""Navigation tags: the top bar's current place and the pipeline bar of a dataset.

`{% load ratelab_nav %}{% pipeline_bar dataset "metrics" %}` is all a page of another app needs
(the metrics and report pages use it): the steps come from the providers registered in
`annotation.services.extensions.points`, so the tag knows nothing of scoring or analysis.
"""

import re

from django import template

from annotation.services.extensions.pipeline import pipeline_for

register = template.Library()

# The top bar's places, by URL: the first pattern that matches the path names the place.
SECTIONS = (
    (re.compile(r"^/surveys/\d+/quality/"), "quality"),
    (re.compile(r"^/quality/"), "quality"),
    (re.compile(r"^/surveys/"), "surveys"),
    (re.compile(r"^/datasets/"), "datasets"),
    (re.compile(r"^/scoring/adem/"), "adem"),
    (re.compile(r"^/scoring/"), "metrics"),
    (re.compile(r"^/analysis/"), "reports"),
)


@register.simple_tag(takes_context=True)
def nav_section(context):
    """The top-bar place the current page belongs to ("datasets", "metrics", ...), or ""."""
    request = context.get("request")
    path = getattr(request, "path", "") or ""
    return next((name for pattern, name in SECTIONS if pattern.match(path)), "")


@register.inclusion_tag("annotation/_pipeline.html", takes_context=True)
def pipeline_bar(context, dataset, current=None):
    """The pipeline bar of `dataset`, with `current` (a step key) marked as this page."""
    user = context.get("user")
    if dataset is None or user is None or not user.is_authenticated:
        return {"steps": []}
    return pipeline_for(dataset, user, current)


# Pages that annotators reach through their link: they never see the researcher's frame (a
# participant of a link platform or Prolific whose link was cut short too).
ANNOTATOR_PATH = re.compile(r"^/(s|a|l|p|mturk)/")
TASK_PATH = re.compile(r"^/a/")


@register.filter
def is_annotator_path(path):
    """True for the annotator's pages (the study link, a task, a platform's entry, the MTurk frame)."""
    return bool(ANNOTATOR_PATH.match(path or ""))


@register.filter
def is_task_path(path):
    """True for a task's own address, whose link stops working when the task goes back to the pool."""
    return bool(TASK_PATH.match(path or ""))
