"""Addresses of the report pages, for links from outside the views (the admin).

Apart from analysis/views/ so that the admin, which Django loads with the apps, does not load the
views and what they compute with (the report's presentation and exports, numpy) in every command.
"""

from django.urls import reverse


def report_url(*, dataset=None, survey=None):
    """The report page of a dataset or survey."""
    if survey is not None:
        return reverse("analysis:survey_report", args=[survey.pk])
    return reverse("analysis:dataset_report", args=[dataset.pk])
