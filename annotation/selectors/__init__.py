"""Reads: what pages, exports and later layers ask of the database, filtered by owner.

The reads that many places share are named here (`selectors.surveys_visible_to(...)`), one module per
concern behind them: `access` (who may read or change which study), `scores` (a dataset's human
scores and systems), `annotator` (the link, the page and the work left). Reads for one family of
pages live in their own module (`studies`, `pseudonyms`) and are imported from it.
"""

from annotation.selectors.access import (
    MANAGE_ANY_STUDY,
    datasets_changeable_by,
    datasets_visible_to,
    may_change_any_study,
    may_change_study,
    may_see_real_worker_ids,
    surveys_changeable_by,
    surveys_visible_to,
    worker_names,
)
from annotation.selectors.annotator import (
    assignment_for_page,
    handed_in_work,
    hits_done,
    hits_finished,
    open_hit_left,
    survey_for_link,
    work_left_for,
)
from annotation.selectors.scores import dataset_systems, human_scores

__all__ = [
    "MANAGE_ANY_STUDY",
    "assignment_for_page",
    "dataset_systems",
    "datasets_changeable_by",
    "datasets_visible_to",
    "handed_in_work",
    "hits_done",
    "hits_finished",
    "human_scores",
    "may_change_any_study",
    "may_change_study",
    "may_see_real_worker_ids",
    "open_hit_left",
    "survey_for_link",
    "surveys_changeable_by",
    "surveys_visible_to",
    "work_left_for",
    "worker_names",
]
