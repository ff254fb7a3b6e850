"""Admin for cached reports, and a "Report" link column on the Dataset and Survey admins.

Layering: `annotation` must not import `analysis`, so annotation/admin.py cannot link here.
Instead this module (imported by admin autodiscovery after annotation's admin, as `analysis`
comes later in INSTALLED_APPS) appends a link column to whatever ModelAdmin annotation
registered for Dataset and Survey. Nothing in annotation changes; if a model is not registered
(or registered later), it simply gets no link.
"""

from django.contrib import admin
from django.utils.html import format_html

from analysis.models import Report
from analysis.views import report_url
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


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ["dataset", "survey", "status", "computed_at", "seconds", "params_hash"]
    list_filter = ["status"]
    readonly_fields = ["dataset", "survey", "params", "params_hash", "fingerprint", "computed_at", "seconds", "error"]
    exclude = ["data", "vectors"]  # large JSON: read them through the report page and exports
