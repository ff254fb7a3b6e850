"""Admin for cached reports, and a "Report" link column on the Dataset and Survey admins.

Layering: `annotation` must not import `analysis`, so annotation/admin/ cannot link here.
Instead this module (imported by admin autodiscovery after annotation's admin, as `analysis`
comes later in INSTALLED_APPS) appends a link column to whatever ModelAdmin annotation
registered for Dataset and Survey. Nothing in annotation changes; if a model is not registered
(or registered later), it simply gets no link.
"""

from urllib.parse import urlencode

from django.contrib import admin
from django.utils.html import format_html

from analysis.models import Report
from analysis.report.links import report_url
from annotation.models import Dataset, Survey


@admin.display(description="Report")
def dataset_report_link(obj):
    return format_html('<a href="{}">report</a>', report_url(dataset=obj))


@admin.display(description="Report")
def survey_report_link(obj):
    return format_html('<a href="{}">report</a>', report_url(survey=obj))


def add_report_link(model, link):
    model_admin = admin.site._registry.get(model)
    if model_admin is None:
        return False
    columns = list(model_admin.list_display)
    if link not in columns:
        model_admin.list_display = [*columns, link]
    return True


add_report_link(Dataset, dataset_report_link)
add_report_link(Survey, survey_report_link)


def filter_query(params):
    """The report page's query string for a cached report's filters ("" for the unfiltered report), so
    the admin's link opens the report the row describes, not the unfiltered one (the page's own
    parameters: aspect, systems, exclusions=0)."""
    params = params or {}
    query = []
    if params.get("aspect") and params["aspect"] != "overall":
        query.append(("aspect", params["aspect"]))
    query.extend(("systems", name) for name in params.get("systems") or [])
    if params.get("apply_exclusions") is False:
        query.append(("exclusions", "0"))
    return f"?{urlencode(query)}" if query else ""


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    """Reports are computed, never written by hand: no "Add", every field read-only, a link to the page."""

    list_display = ["__str__", "dataset", "survey", "status", "computed_at", "rounded_seconds", "rendered_report"]
    list_filter = ["status"]
    fields = readonly_fields = [
        "rendered_report", "dataset", "survey", "params", "status", "requested_at", "computed_at", "checked_at",
        "rounded_seconds", "fingerprint", "error",
    ]  # fmt: skip

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # the change page still opens, read-only, for users with the view permission

    @admin.display(description="Time taken", ordering="seconds")
    def rounded_seconds(self, obj):
        return "–" if obj.seconds is None else f"{obj.seconds:.1f} s"

    @admin.display(description="Report page")
    def rendered_report(self, obj):
        url = report_url(dataset=obj.dataset, survey=obj.survey) + filter_query(obj.params)
        return format_html('<a href="{}">open the report</a>', url)

    def get_queryset(self, request):
        return super().get_queryset(request).defer("data", "vectors").select_related("dataset", "survey")
