"""analysis's step of the pipeline bar (Report) and the report state the reports index shows."""

from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from analysis.models import Report
from annotation.extensions import PipelineStep


def report_state(*, dataset, survey=None):
    """('report computed 2 minutes ago' | 'computing…' | 'not computed yet' | ..., has figures).

    The newest report of the dataset (or of the survey) whatever its filters: the bar says whether
    there is anything to read, the page itself says whether its own filters' report is current.
    """
    reports = Report.objects.filter(dataset=dataset, survey=survey).defer("data", "vectors")
    latest = reports.exclude(computed_at=None).order_by("-computed_at").first()
    newest = reports.order_by("-requested_at", "-pk").first()
    if latest is None:
        if newest is not None and newest.status == Report.Status.FAILED:
            return "computation failed", False
        if newest is not None:
            return "computing…", False
        return "not computed yet", False
    age = timezone.now() - latest.computed_at
    text = (
        "computed just now"
        if age.total_seconds() < 60
        else f"computed {timesince(latest.computed_at).split(',')[0]} ago"
    )
    if latest.status == Report.Status.FAILED:
        text += ", last update failed"
    return text, True


def analysis_steps(dataset, user):
    """Pipeline-step provider for the Report (registered in AnalysisConfig.ready)."""
    state, done = report_state(dataset=dataset)
    return [
        PipelineStep(
            key="report",
            label="Report",
            url=reverse("analysis:dataset_report", args=[dataset.pk]),
            state=f"report {state}",
            done=done,
            order=60,
        )
    ]
