"""analysis's step of the pipeline bar (Report) and the report state the reports index shows."""

from django.db.models import F, Window
from django.db.models.functions import RowNumber
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
    return _state_of_rows(rows)


def report_states(datasets):
    """`{(dataset id, survey id or None): (text, has figures)}` for every report of `datasets`, in
    one query, for the Reports index; a pair with no report is absent ('not computed yet').

    The newest REPORTS_CONSIDERED of each pair, as `report_state` reads them (a window numbers each
    pair's reports newest first).
    """
    rows = (
        Report.objects.filter(dataset__in=[dataset.pk for dataset in datasets])
        .annotate(rank=Window(RowNumber(), partition_by=[F("dataset_id"), F("survey_id")], order_by=F("pk").desc()))
        .filter(rank__lte=REPORTS_CONSIDERED)
        .order_by("-pk")
        .values("dataset_id", "survey_id", "status", "computed_at", "requested_at")
    )
    by_pair = {}
    for row in rows:
        by_pair.setdefault((row["dataset_id"], row["survey_id"]), []).append(row)
    return {pair: _state_of_rows(pair_rows) for pair, pair_rows in by_pair.items()}


NO_REPORT = ("not computed yet", False)


def _state_of_rows(rows):
    """The state told by one dataset's (or survey's) reports, newest first."""
    computed = [row for row in rows if row["computed_at"] is not None]
    latest = max(computed, key=lambda row: row["computed_at"], default=None)
    if latest is None:
        if rows and rows[0]["status"] == Report.Status.FAILED:
            return "computation failed", False
        if rows:
            return "computing…", False
        return NO_REPORT
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
