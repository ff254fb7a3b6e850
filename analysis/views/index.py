"""The Reports place of the top bar: the researcher's datasets and surveys and their reports."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_GET

from analysis.services.pipeline import NO_REPORT, report_states
from annotation.models import Survey
from annotation.selectors import datasets_visible_to, surveys_visible_to


def _row(states, *, dataset, survey=None):
    text, ready = states.get((dataset.pk, survey.pk if survey else None), NO_REPORT)
    return {"dataset": dataset, "survey": survey, "state": text, "ready": ready}


@login_required
@require_GET
def reports_index(request):
    datasets = datasets_visible_to(user=request.user).order_by("name")
    # Surveys still in draft have no ratings to correlate with.
    surveys = (
        surveys_visible_to(user=request.user).exclude(status=Survey.Status.DRAFT).order_by("dataset__name", "name")
    )
    datasets, surveys = list(datasets), list(surveys)
    # Every row's state from one query, not one per dataset and per survey.
    states = report_states(datasets + [survey.dataset for survey in surveys])
    context = {
        "dataset_rows": [_row(states, dataset=dataset) for dataset in datasets],
        "survey_rows": [_row(states, dataset=survey.dataset, survey=survey) for survey in surveys],
    }
    return render(request, "analysis/reports_index.html", context)
