"""What the start page tells an annotator before they take a task: its size and how long it takes."""

import math
import statistics

from django.core.cache import cache

from annotation.kinds.registry import kind_for
from annotation.models import HIT, Assignment, HITItem
from annotation.views.task_page.wording import task_wording

FACTS_CACHE_SECONDS = 300
MEASURED_AFTER = 5  # finished tasks before their median replaces the estimate


def task_facts(*, survey):
    """`{"items": n, "minutes": m, "measured": bool, "hits": h}`: replies per task, its time in
    minutes and how many tasks (HITs) the survey has.

    The time is the median of the survey's finished tasks once there are a few, else an estimate
    from its layout; cached a few minutes per survey (the start page is every annotator's first).
    """
    key = f"annotation:task-facts:v2:{survey.token}"  # v2: with "hits"
    facts = cache.get(key)
    if facts is None:
        facts = _facts(survey)
        cache.set(key, facts, FACTS_CACHE_SECONDS)
    return facts


def _facts(survey):
    n_hits = HIT.objects.filter(survey=survey).count()
    n_items = HITItem.objects.filter(hit__survey=survey).count()
    items = round(n_items / n_hits) if n_hits else 0
    finished = Assignment.objects.filter(
        hit__survey=survey, status__in=Assignment.FINISHED, assigned_at__isnull=False, submitted_at__isnull=False
    ).order_by("-submitted_at")[:200]
    durations = [(a.submitted_at - a.assigned_at).total_seconds() for a in finished.only("assigned_at", "submitted_at")]
    if len(durations) >= MEASURED_AFTER:
        seconds, measured = statistics.median(durations), True
    else:
        seconds = kind_for(survey).estimated_seconds(items=items, n_aspects=survey.aspects.count(), survey=survey)
        measured = False
    return {"items": items, "minutes": max(1, math.ceil(seconds / 60)), "measured": measured, "hits": n_hits}


def tasks_at_most(*, survey, facts=None, hits=None):
    """How many tasks one annotator can do in `survey` at most: its per-annotator cap, or fewer
    when the survey has fewer HITs (nobody does a HIT twice). "Up to 10 tasks" on a survey of two
    HITs promised work that was never there. `hits`: the survey's number of HITs where the caller
    read it already (the task page's one query does)."""
    if hits is None:
        hits = facts["hits"] if facts else _hit_count(survey)
    return min(survey.max_hits_per_annotator, hits)


def _hit_count(survey):
    """The survey's number of HITs, cached as the facts are: the task page asks it, and reads no item."""
    key = f"annotation:task-hits:{survey.token}"
    count = cache.get(key)
    if count is None:
        count = HIT.objects.filter(survey=survey).count()
        cache.set(key, count, FACTS_CACHE_SECONDS)
    return count


def entry_facts(survey):
    """What a start page shows of the task (`facts`, `wording`, `tasks_at_most`): the survey's own
    link and the link platforms' and Prolific's entry pages say the same."""
    facts = task_facts(survey=survey)
    return {"facts": facts, "wording": task_wording(survey), "tasks_at_most": tasks_at_most(survey=survey, facts=facts)}
