"""Downloads of a report: exports (JSON, one CSV per table, a zip of them, LaTeX) and plots.

File names go through Django's `content_disposition_header`, never into the header raw: a
dataset named `x"; y=1` or a metric parameter with CR/LF can neither add a parameter nor break
the response. A plot's metric must be one of the report's metrics (404 otherwise).
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from analysis.report import plots
from analysis.report.population import population_text, without_annotator_refs
from analysis.services import exports
from analysis.tasks.scheduling import report_is_stale, report_pending, report_request
from analysis.views.report import pseudonymised, visible_report
from annotation.selectors import may_see_real_worker_ids
from annotation.services.exporting import REAL_IDS_HEADER, REAL_IDS_SUFFIX

EXPORTS = {
    "json": ("application/json", "json"),
    "latex": ("text/x-tex; charset=utf-8", "tex"),
    "csv": ("text/csv; charset=utf-8", "csv"),
    "zip": ("application/zip", "zip"),
}


def _safe(name):
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:80].strip("-")


def download_name(report, suffix, extension):
    """A file name from the dataset's name, and the survey's for a survey's report (so it does not
    overwrite the dataset-wide report's file in a downloads folder): letters, digits, - and _."""
    stem = _safe(report.dataset.name) or "dataset"
    if report.survey_id:
        stem = f"{stem}-{_safe(report.survey.name) or 'survey'}"
    return f"report-{stem}{'-' + suffix if suffix else ''}.{extension}"


def plot_download_name(report, kind, metric, extension):
    """Named like the report's exports, plus the plot and its metric: `adem:demo` keeps no `:`
    (Windows refuses one in a file name), and a whole-report plot names only its kind."""
    suffix = f"{kind}-{_safe(metric) or 'metric'}" if metric else kind
    return download_name(report, suffix, extension)


def attach(response, filename):
    # Django's own header builder: quotes, CR/LF and non-ASCII become an RFC 6266 filename*.
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def stale_note(report, stale):
    when = report.computed_at.strftime("%Y-%m-%d %H:%M:%S UTC") if report.computed_at else "never"
    if not stale:
        return f"Computed {when} from the current ratings, exclusions and metric scores."
    return (
        f"STALE: computed {when}; ratings, exclusions or metric scores have changed since. "
        "A recomputation has been queued: download again once the report page shows the new figures."
    )


def ids_note(real_ids):
    if real_ids:
        return "CARRIES REAL WORKER IDS: for the researcher's own records; do not publish or share."
    return "Workers are pseudonyms (A1, A2, ...), stable across this dataset's exports, numbered by first rating."


@login_required
@require_GET
def report_export(request, pk, fmt):
    """A download of the report. When its inputs changed since it was computed, the download is
    stamped stale (header `X-RateLab-Report-Stale: 1`, a `stale` key in the JSON, a note in the
    zip's README and atop the LaTeX) and a recomputation is queued, rather than the request
    waiting for it."""
    if fmt not in EXPORTS:
        raise Http404("No such format.")
    report = visible_report(request, pk)
    content_type, extension = EXPORTS[fmt]
    table = request.GET.get("table") or None
    if table is not None and (fmt != "csv" or table not in exports.TABLES):
        raise Http404("No such table.")
    if fmt == "csv" and table is None:
        raise Http404("Name a table (?table=…); every table is in export.zip.")
    real_ids = request.GET.get("ids") == "real"
    if real_ids and not may_see_real_worker_ids(user=request.user, study=report.dataset):
        raise Http404("Real worker ids are for the dataset's owner only.")
    stale = report_pending(report) or report_is_stale(report)
    if stale:
        report_request(report=report)
    note = stale_note(report, stale) + "\n" + ids_note(real_ids)
    # Meant for a paper: workers are pseudonyms (A1, A2, ... per dataset) unless the owner asks.
    data = report.data if real_ids else without_annotator_refs(pseudonymised(report, report.dataset))
    ids = "real" if real_ids else "pseudonymised"
    stamped = {**data, "population": population_text(data), "stale": stale, "stale_note": note, "worker_ids": ids}
    if fmt == "json":
        content = exports.to_json(stamped)
    elif fmt == "latex":
        content = "".join(f"% {line}\n" for line in note.splitlines()) + exports.to_latex(data)
    elif fmt == "csv":
        content = exports.to_csv(data, table)
    else:
        content = exports.to_zip(stamped, readme=note + "\n")
    response = HttpResponse(content, content_type=content_type)
    response["X-RateLab-Report-Stale"] = "1" if stale else "0"
    response[REAL_IDS_HEADER] = "real" if real_ids else "pseudonymised"
    if report.computed_at:
        response["X-RateLab-Report-Computed-At"] = report.computed_at.isoformat()
    suffix = "-".join(part for part in (table, REAL_IDS_SUFFIX if real_ids else "") if part) or None
    return attach(response, download_name(report, suffix, extension))


@login_required
@require_GET
def report_plot(request, pk, kind, fmt):
    if kind not in plots.KINDS or fmt not in plots.FORMATS:
        raise Http404("No such plot.")
    report = visible_report(request, pk, with_vectors=True)
    metric = None
    if kind not in plots.WHOLE_REPORT:
        metric = request.GET.get("metric")
        if metric not in report.data.get("metrics", []):
            raise Http404("No such metric in this report.")
    content = plots.plot_bytes(report, kind, metric, fmt)
    if content is None:
        raise Http404("No such plot.")
    response = HttpResponse(content, content_type=plots.FORMATS[fmt])
    response["Cache-Control"] = "private, max-age=3600"
    if request.GET.get("download"):
        attach(response, plot_download_name(report, kind, metric, fmt))
    return response
