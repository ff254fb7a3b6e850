"""The planning panel on the survey page (issue 20, point 6), registered in annotation's extensions.

annotation must not import analysis, so the survey page asks `annotation.extensions.points.survey_panels`
and analysis answers here: it reads the survey's cached report (never computes on a page view) and
renders its planning section with one button per option that adds ratings per response. The
button posts to annotation's own `survey_extend` endpoint, which owns the write and the provider call.
"""

import math

from django.template.loader import render_to_string
from django.urls import reverse

from analysis.models import Report
from analysis.presentation_metaeval import planning_table
from analysis.report_keys import params_hash, report_params
from annotation.crowd.registry import assignment_ceiling, can_add_assignments
from annotation.models import Survey
from annotation.selectors import may_change_study
from annotation.services.extend import MAX_EXTRA_PER_HIT


def _extend_options(planning, survey):
    """(ratings to add per response, resulting per HIT, the option's row) for each option above now."""
    m_now = planning.get("ratings_per_response") or 0
    # MTurk cannot take a HIT from fewer than 10 assignments to 10 or more: such buttons would only be refused.
    ceiling = assignment_ceiling(survey)
    options = []
    for option in planning.get("options", []):
        extra = math.ceil(option["ratings_per_response"] - m_now - 1e-9)
        if ceiling is not None and survey.assignments_per_hit < ceiling <= survey.assignments_per_hit + extra:
            continue
        # More than the extension accepts in one go would be a button that is always refused.
        if 1 <= extra <= MAX_EXTRA_PER_HIT:
            options.append({"per_hit": extra, "after": survey.assignments_per_hit + extra, "option": option})
    return options


def planning_panel(request, survey):
    if survey.task_type != Survey.TaskType.RATE:
        return ""  # planning sizes 1-5 ratings per response; a pairwise or writing survey has none
    report = (
        Report.objects.defer("vectors")
        .filter(dataset_id=survey.dataset_id, survey=survey, params_hash=params_hash(report_params()))
        .first()
    )
    data = report.data if report is not None else None
    planning = (data or {}).get("planning") or {}
    context = {
        "survey": survey,
        "report_url": reverse("analysis:survey_report", args=[survey.pk]),
        "planning": planning,
        "table": planning_table(data) if data else None,
        "computed_at": report.computed_at if report is not None else None,
        "may_change": may_change_study(user=request.user, study=survey),
        "can_extend": can_add_assignments(survey),
        "extend_options": _extend_options(planning, survey) if planning.get("metric") else [],
        "assignment_ceiling": assignment_ceiling(survey),
        "extend_url": reverse("annotation:survey_extend", args=[survey.pk]),
    }
    return render_to_string("analysis/_planning_panel.html", context, request=request)  # request: CSRF token
