"""analysis's step of the pipeline bar (Report) and the report state the reports index shows."""

from django.db.models import F, Max, Window
from django.db.models.functions import RowNumber
from django.urls import reverse
from django.utils import timezone
from django.utils.timesince import timesince

from analysis.models import Report
from annotation.models import ExclusionDecision, Rating
from annotation.services.extensions.points import PipelineStep
from scoring.models import MetricChunk

REPORTS_CONSIDERED = 50


def report_state(*, dataset, survey=None):
    """('report computed 2 minutes ago' | 'computing…' | 'not computed yet' | ..., has figures).

    The newest report of the dataset (or of the survey) whatever its filters: the bar says whether
    there is anything to read, the page itself says whether its own filters' report is current.
    """
    return _state_of_newest(Report.objects.filter(dataset=dataset, survey=survey))


def _state_of_newest(reports):
    # One small query (a dataset has a report per filter set, a handful): the bar's budget is tight.
    rows = list(reports.order_by("-pk").values("status", "computed_at", "requested_at")[:REPORTS_CONSIDERED])
    return _state_of_rows(rows)


def report_states(datasets):
    """`{(dataset id, survey id or None): (text, has figures)}` for every report of `datasets`, in
    four queries, for the Reports index; a pair with no report is absent ('not computed yet').

    The newest REPORTS_CONSIDERED of each pair, as `report_state` reads them (a window numbers each
    pair's reports newest first).
    """
    rows = (
        Report.objects.filter(dataset__in=[dataset.pk for dataset in datasets])
        .annotate(rank=Window(RowNumber(), partition_by=[F("dataset_id"), F("survey_id")], order_by=F("pk").desc()))
        .filter(rank__lte=REPORTS_CONSIDERED)
        .order_by("-pk")
        .values("dataset_id", "survey_id", "status", "computed_at", "requested_at", "params", "checked_at")
    )
    by_pair = {}
    for row in rows:
        by_pair.setdefault((row["dataset_id"], row["survey_id"]), []).append(row)
    changed = _inputs_changed_at({dataset_id for dataset_id, _ in by_pair})
    return {
        pair: _state_of_rows(pair_rows, changed_at=lambda params, pair=pair: changed(*pair, params))
        for pair, pair_rows in by_pair.items()
    }


def _inputs_changed_at(dataset_ids):
    """`changed(dataset id, survey id or None, params)`: when the newest rating (of the report's
    aspect), exclusion decision (where the report applies them) or metric scores arrived.

    Three grouped queries whatever the number of rows; the report page's own check (the change
    marker, then the fingerprint) costs several per report. Newer than the report's computation
    means out of date. Deletions, rejections and MTurk confirmations leave no timestamp: those
    are for the report page to notice when opened.
    """
    ratings = list(
        Rating.objects.filter(survey__dataset_id__in=dataset_ids)
        .values_list("survey__dataset_id", "survey_id", "aspect")
        .annotate(last=Max("created_at"))
        .order_by()
    )
    decisions = list(
        ExclusionDecision.objects.filter(survey__dataset_id__in=dataset_ids)
        .values_list("survey__dataset_id", "survey_id")
        .annotate(last=Max("created_at"))
        .order_by()
    )
    # Scores are written a chunk at a time, the chunk marked done in the same transaction: its
    # finished_at dates them from a table of a few rows a run (grouping the scores themselves took
    # 0.3 s for 280,000 of them on SQLite).
    scores = dict(
        MetricChunk.objects.filter(run__dataset_id__in=dataset_ids, finished_at__isnull=False)
        .values_list("run__dataset_id")
        .annotate(last=Max("finished_at"))
        .order_by()
    )

    def changed(dataset_id, survey_id, params):
        def read(dataset, survey):  # a dataset's report reads all its surveys, a survey's its own
            return dataset == dataset_id and survey_id in (None, survey)

        aspect = params.get("aspect") or "overall"
        times = [last for dataset, survey, rated, last in ratings if read(dataset, survey) and rated == aspect]
        if params.get("apply_exclusions", True):
            times += [last for dataset, survey, last in decisions if read(dataset, survey)]
        if scores.get(dataset_id):
            times.append(scores[dataset_id])
        return max(times, default=None)

    return changed


NO_REPORT = ("not computed yet", False)


def _state_of_rows(rows, changed_at=None):
    """The state told by one dataset's (or survey's) reports, newest first. `changed_at(params)`,
    where given, says when the inputs of a report with those filters last changed."""
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
    elif changed_at is not None and (changed := changed_at(latest["params"])):
        # A fingerprint check finding the same inputs (a metric rescored to the same values) counts
        # as current from when it ran.
        known_current = max(computed_at, latest["checked_at"] or computed_at)
        if changed > known_current:
            text += ", out of date (ratings or scores changed since)"
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
