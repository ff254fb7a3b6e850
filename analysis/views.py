"""Report pages for researchers: the report of a dataset or of one survey, its exports and plots.

Views only read the cached Report; when it is missing or stale they queue the Celery task and
show what they have (or "computing…"). Nothing heavy runs in the request unless Celery is eager.
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from analysis import exporting, plots
from analysis.models import Report
from analysis.scheduling import report_current, report_pending
from annotation.selectors import datasets_visible_to, surveys_visible_to

EXPORTS = {
    "json": ("application/json", exporting.to_json, "json"),
    "latex": ("text/x-tex; charset=utf-8", exporting.to_latex, "tex"),
    "csv": ("text/csv; charset=utf-8", exporting.to_csv, "csv"),
}


def _filters(request):
    systems = [s for s in request.GET.getlist("systems") if s]
    return {
        "aspect": request.GET.get("aspect") or "overall",
        "systems": systems or None,
        "apply_exclusions": request.GET.get("exclusions", "1") != "0",
    }


def _render_report(request, *, dataset, survey, filters):
    report = report_current(dataset=dataset, survey=survey, **filters)
    aspects = sorted({a for s in dataset.surveys.all() for a in s.aspects.values_list("key", flat=True)} | {"overall"})
    context = {
        "dataset": dataset,
        "survey": survey,
        "report": report,
        "data": report.data,
        "pending": report_pending(report),
        "filters": filters,
        "systems": list(dataset.systems.values_list("name", flat=True)),
        "aspects": aspects,
        "query": request.GET.urlencode(),
        # Lazy: only evaluated when the cached fragment of the template is (re)rendered.
        "tables": lambda: _tables(report.data) if report.data else [],
    }
    return render(request, "analysis/report.html", context)


TABLE_TITLES = {
    "utterance_level": "Utterance level: each metric against the mean human score",
    "system_level": "System level: correlation across systems",
    "systems": "Per-system means (95% CI)",
    "williams": "Williams' test: does metric a correlate better than metric b?",
    "length_bias": "Length bias: |Δwords| ≤ 6 vs > 6",
    "stopwords": "With and without stopwords and punctuation",
    "failure_analysis": "Failure analysis: good responses (human ≥ 4) the overlap metrics score ≤ 2",
    "agreement_pairs": "Pairwise annotator agreement",
    "agreement_annotators": "Annotators",
}


def _tables(data):
    out = []
    for name in exporting.TABLES:
        header, rows = exporting.table(data, name)
        out.append({"name": name, "title": TABLE_TITLES[name], "header": header, "rows": rows})
    return out


@login_required
@require_GET
def dataset_report(request, dataset_id):
    dataset = get_object_or_404(datasets_visible_to(user=request.user), pk=dataset_id)
    return _render_report(request, dataset=dataset, survey=None, filters=_filters(request))


@login_required
@require_GET
def survey_report(request, survey_id):
    survey = get_object_or_404(surveys_visible_to(user=request.user), pk=survey_id)
    return _render_report(request, dataset=survey.dataset, survey=survey, filters=_filters(request))


def _visible_report(request, pk, *, with_vectors=False):
    reports = Report.objects.select_related("dataset", "survey")
    if not with_vectors:
        reports = reports.defer("vectors")
    report = get_object_or_404(reports, pk=pk)
    if not datasets_visible_to(user=request.user).filter(pk=report.dataset_id).exists():
        raise Http404("No such report.")
    if report.data is None:
        raise Http404("The report has not been computed yet.")
    return report


@login_required
@require_GET
def report_export(request, pk, fmt):
    if fmt not in EXPORTS:
        raise Http404("No such format.")
    report = _visible_report(request, pk)
    content_type, writer, extension = EXPORTS[fmt]
    table = request.GET.get("table")
    if fmt == "csv" and table and table not in exporting.TABLES:
        raise Http404("No such table.")
    content = writer(report.data, table) if fmt == "csv" else writer(report.data)
    response = HttpResponse(content, content_type=content_type)
    name = f"report-{report.dataset.name}{'-' + table if table else ''}.{extension}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_GET
def report_plot(request, pk, kind, fmt):
    if kind not in plots.KINDS or fmt not in plots.FORMATS:
        raise Http404("No such plot.")
    report = _visible_report(request, pk, with_vectors=True)
    content = plots.plot_bytes(report, kind, request.GET.get("metric"), fmt)
    if content is None:
        raise Http404("No such plot.")
    response = HttpResponse(content, content_type=plots.FORMATS[fmt])
    response["Cache-Control"] = "private, max-age=3600"
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{kind}-{request.GET.get("metric", "all")}.{fmt}"'
    return response


def report_url(*, dataset=None, survey=None):
    """The report page of a dataset or survey (used by the admin links)."""
    if survey is not None:
        return reverse("analysis:survey_report", args=[survey.pk])
    return reverse("analysis:dataset_report", args=[dataset.pk])
