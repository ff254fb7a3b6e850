"""analysis's step of the pipeline bar (Report) and the report state the reports index shows."""

from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from analysis.models import Report
from annotation.extensions import PipelineStep

REPORTS_CONSIDERED = 50


def report_state(*, dataset, survey=None):
    """('report computed 2 minutes ago' | 'computing…' | 'not computed yet' | ..., has figures).

    The newest report of the dataset (or of the survey) whatever its filters: the bar says whether
    there is anything to read, the page itself says whether its own filters' report is current.
    """
    return _state_of_newest(Report.objects.filter(dataset=dataset, survey=survey))


def _state_of_newest(reports):
    # One small query (a dataset has a report per filter set, a handful): the bar's budget is tight.
    rows = list(
        reports.order_by("-pk")
        .values("status", "computed_at", "requested_at")[:REPORTS_CONSIDERED]
    )
    computed = [row for row in rows if row["computed_at"] is not None]
    latest = max(computed, key=lambda row: row["computed_at"], default=None)
    if latest is None:
        if rows and rows[0]["status"] == Report.Status.FAILED:
            return "computation failed", False
        if rows:
            return "computing…", False
        return "not computed yet", False
    computed_at = latest["computed_at"]
    if (timezone.now() - computed_at).total_seconds() < 60:
        text = "computed just now"
    else:
        text = f"computed {timesince(computed_at).split(',')[0]} ago"
    if latest["status"] == Report.Status.FAILED:
        text += ", last update failed"
    return text, True


def analysis_steps(dataset, user):
    """Pipeline-step provider for the Report (registered in AnalysisConfig.ready)."""
    state, done = report_state(dataset=dataset)
    state = f"report {state}"
    if not done:
        # A researcher reading a survey's report saw the bar say "report not computed yet" beside it:
        # the dataset-wide report was not computed, but there is a report to read.
        surveys_reports = Report.objects.filter(dataset=dataset, survey__owner=user)
        survey_state, survey_done = _state_of_newest(surveys_reports)
        if survey_done:
            state, done = f"survey report {survey_state}", True
    return [
        PipelineStep(
            key="report",
            label="Report",
            url=reverse("analysis:dataset_report", args=[dataset.pk]),
            state=state,
            done=done,
            order=60,
        )
    ]
