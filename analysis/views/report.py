"""Report pages for researchers: the report of a dataset or of one survey, its tables, refresh and status.

Views only read the cached Report; when it is missing or stale they queue the Celery task and
show what they have, with a "recomputing" banner that a small script (static/analysis/report.js)
turns into a reload once the status endpoint says the new figures are ready. Downloads (exports,
plots) are in analysis/views/downloads.py.
"""

import threading
from collections import OrderedDict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from analysis.models import Report
from analysis.report.links import report_url
from analysis.report.options import EPSILONS, RATING_SCORINGS, WEIGHTINGS, options_from_query, resolved
from analysis.report.population import EXCLUDED_LEAD, population_text
from analysis.sections.registry import page_table
from analysis.sections.signatures import signature_lines
from analysis.services.page import full_table, page_parts, page_tables, why_empty
from analysis.tasks.scheduling import report_current, report_pending, report_refresh_request
from annotation.models import Aspect, ConversationAspect, Survey
from annotation.selectors import (
    datasets_changeable_by,
    datasets_visible_to,
    may_change_study,
    may_see_real_worker_ids,
    surveys_visible_to,
)
from annotation.selectors.pseudonyms import label_map, scrub_report

# Rows per page of a table's "show all" page.
ALL_ROWS_PAGE = 500


def _filters(request):
    systems = [s for s in request.GET.getlist("systems") if s]
    return {
        "aspect": request.GET.get("aspect") or "overall",
        "systems": systems or None,
        "apply_exclusions": request.GET.get("exclusions", "1") != "0",
        "options": options_from_query(request.GET),
    }


def report_labels(report, dataset):
    """The dataset's `{worker label: pseudonym}`, cached per computed report: a cached page
    stays at its few queries, and new ratings make a new report (and key) anyway."""
    stamp = report.computed_at.timestamp() if report.computed_at else "none"
    key = f"ratelab:report-pseudonyms:{report.pk}:{stamp}"
    labels = cache.get(key)
    if labels is None:
        labels = label_map(dataset=dataset)
        cache.set(key, labels, 24 * 3600)
    return labels


# The last few reports' pseudonymised data, per process: scrubbing a 100,000-rating report's
# agreement section (3 MB of annotator pairs) took ~0.5 s, on every view of a cached page.
_SCRUBBED = OrderedDict()
_SCRUBBED_KEEP = 4
_SCRUBBED_LOCK = threading.Lock()


def pseudonymised(report, dataset):
    """The report's data with workers as their dataset pseudonyms (A1, A2, ...): the report page is
    what gets screenshotted into slides and papers; the quality pages keep the real ids for the
    study's owner (annotation.selectors.worker_names). Shared between views of the same computed
    report: callers must not change it."""
    if not report.data:
        return report.data
    key = (report.pk, report.computed_at)
    with _SCRUBBED_LOCK:
        if key in _SCRUBBED:
            _SCRUBBED.move_to_end(key)
            return _SCRUBBED[key]
    data = scrub_report(report.data, report_labels(report, dataset))
    with _SCRUBBED_LOCK:
        _SCRUBBED[key] = data
        while len(_SCRUBBED) > _SCRUBBED_KEEP:
            _SCRUBBED.popitem(last=False)
    return data


def _unknown_filter(filters, aspects, systems, *, survey=None):
    """What in the page's filters names no aspect or system of the dataset (or the survey's aspects),
    or "" when all do."""
    if filters["aspect"] not in aspects:
        whose = "survey" if survey is not None else "dataset"
        return f"This {whose} has no aspect {filters['aspect'][:80]!r}: the report below is for all its ratings."
    unknown = [name for name in filters["systems"] or [] if name not in systems]
    baseline = (filters.get("options") or {}).get("baseline")
    if baseline is not None and baseline not in systems:
        unknown = unknown or [baseline]
    if unknown:
        return f"This dataset has no system {unknown[0][:80]!r}: the report below is for all its systems."
    return ""


def excluded_links(user, data):
    """The report's excluded annotators as the page names them: `[{"name", "url"}]`.

    Everyone sees the dataset pseudonyms (A3): the page is what gets screenshotted into slides.
    The owner of the annotator's survey also gets a link to that annotator on the survey's quality
    page, which names them by their real id for the owner only (F21); staff and admins, who see
    pseudonyms everywhere, get no link.
    """
    filters = (data or {}).get("filters") or {}
    refs = filters.get("excluded_annotator_refs") or []
    if not refs:
        return [{"name": name} for name in filters.get("excluded_annotators") or []]
    surveys = Survey.objects.in_bulk({ref["survey_id"] for ref in refs})
    owned = {pk for pk, survey in surveys.items() if may_see_real_worker_ids(user=user, study=survey)}
    links, seen = [], set()
    for ref in refs:
        if ref["survey_id"] in owned:
            url = reverse("annotation:quality_annotator", args=[ref["survey_id"], ref["annotator_id"]])
            links.append({"name": ref["worker"], "url": url})
        elif ref["worker"] not in seen:
            links.append({"name": ref["worker"]})
        seen.add(ref["worker"])
    return links


def _render_report(request, *, dataset, survey, filters):
    # A survey's report offers its own aspects only: another survey's aspect has none of its ratings.
    rated = [survey] if survey is not None else dataset.surveys.all()
    # One query: the surveys' aspects and, for the dataset's report, those of its imported conversation
    # ratings (the Conversations section's filter).
    keys = Aspect.objects.filter(survey__in=rated).order_by().values_list("key", flat=True)
    if survey is None:
        keys = keys.union(ConversationAspect.objects.filter(dataset=dataset).order_by().values_list("key", flat=True))
    aspects = sorted(set(keys) | {"overall"})
    systems = list(dataset.systems.values_list("name", flat=True))
    # A report is computed (and stored) per filter: a link naming an aspect or a system the dataset
    # lacks must not start a computation of its own (any number of them, by mistake or on purpose).
    unknown = _unknown_filter(filters, aspects, systems, survey=survey)
    if unknown:
        messages.error(request, unknown)
        return redirect(request.path)
    report = report_current(dataset=dataset, survey=survey, **filters)
    data = pseudonymised(report, dataset)
    # The registered sections that apply, in page order (lazy, as the tables below).
    parts = SimpleLazyObject(lambda: page_parts(data) if data else [])
    if survey is not None:
        quality_url = reverse("annotation:quality_survey", args=[survey.pk])
    else:
        quality_url = reverse("annotation:quality_index")
    context = {
        "dataset": dataset,
        "survey": survey,
        "report": report,
        "data": data,
        "pending": report_pending(report),
        "inputs": (data or {}).get("inputs"),
        "why_empty": why_empty(data) if data else "",
        "population_text": population_text(data, name_excluded=False) if data else "",
        "excluded_lead": EXCLUDED_LEAD,
        "excluded": excluded_links(request.user, data) if data else [],
        "filters": filters,
        "options": resolved(filters["options"]),
        "epsilons": EPSILONS,
        "alt_scorings": RATING_SCORINGS,
        "weightings": WEIGHTINGS,
        "systems": systems,
        "aspects": aspects,
        "query": request.GET.urlencode(),
        "here": request.get_full_path(),
        "quality_url": quality_url,
        # Lazy: only evaluated when the cached fragment of the template is (re)rendered.
        "parts": parts,
        "tables": SimpleLazyObject(lambda: page_tables(parts)),
        "signatures": lambda: signature_lines(data),
        "may_refresh": may_change_study(user=request.user, study=dataset),
    }
    return render(request, "analysis/report.html", context)


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


def visible_report(request, pk, *, with_vectors=False, with_data=True, computed=True):
    """The report `pk` if the user may see its dataset (404 otherwise, and before it is computed)."""
    reports = Report.objects.select_related("dataset", "survey")
    if not with_vectors:
        reports = reports.defer("vectors")
    if not with_data:
        reports = reports.defer("data")
    report = get_object_or_404(reports, pk=pk)
    if not datasets_visible_to(user=request.user).filter(pk=report.dataset_id).exists():
        raise Http404("No such report.")
    if computed and with_data and report.data is None:
        raise Http404("The report has not been computed yet.")
    return report


@login_required
@require_GET
def report_status(request, pk):
    """What the page's script polls: is a computation still under way?"""
    report = visible_report(request, pk, with_data=False, computed=False)
    return JsonResponse(
        {
            "status": report.status,
            "pending": report_pending(report),
            "computed_at": report.computed_at.isoformat() if report.computed_at else None,
            "requested_at": report.requested_at.isoformat() if report.requested_at else None,
            "error": report.error,
        }
    )


@login_required
@require_POST
def report_refresh(request, pk):
    """The Refresh button: queue a recomputation and return at once (or say it is up to date).

    Owner-only like every other action on a study (a superuser or a holder of the manage permission
    too): staff read every report, but queueing work on another's is a 404, as their other writes are.
    """
    report = visible_report(request, pk, computed=False)
    if not datasets_changeable_by(user=request.user).filter(pk=report.dataset_id).exists():
        raise Http404("No such report.")
    outcome = report_refresh_request(report=report)
    if outcome == "up to date":
        computed = report.computed_at.strftime("%Y-%m-%d %H:%M UTC")
        messages.info(
            request,
            f"The report is up to date: no rating, exclusion or metric score, nor the code that computes "
            f"the report, has changed since {computed}.",
        )
    elif outcome == "running":
        messages.info(request, "The report is already being recomputed; this page reloads when it is ready.")
    else:
        messages.success(request, "Recomputing the report; this page reloads when it is ready.")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = report_url(dataset=report.dataset, survey=report.survey)
    return redirect(back)


@login_required
@require_GET
def report_table(request, pk, name):
    """Every row of one table, a page at a time (the report page shows only the first rows)."""
    if page_table(name) is None:
        raise Http404("No such table.")
    report = visible_report(request, pk)
    data = pseudonymised(report, report.dataset)
    # Every row; under the compact Williams and ranking tables "show all" means every pair.
    table = full_table(data, name)
    page = Paginator(table.rows, ALL_ROWS_PAGE).get_page(request.GET.get("page"))
    context = {
        "report": report,
        "dataset": report.dataset,
        "survey": report.survey,
        "table": table,
        "page": page,
        "back": report_url(dataset=report.dataset, survey=report.survey),
    }
    return render(request, "analysis/report_table.html", context)
