from django.urls import path

from analysis.views import downloads, index, report

app_name = "analysis"

urlpatterns = [
    path("reports/", index.reports_index, name="reports_index"),
    path("datasets/<int:dataset_id>/report/", report.dataset_report, name="dataset_report"),
    path("surveys/<int:survey_id>/report/", report.survey_report, name="survey_report"),
    path("reports/<int:pk>/status.json", report.report_status, name="report_status"),
    path("reports/<int:pk>/refresh/", report.report_refresh, name="report_refresh"),
    path("reports/<int:pk>/tables/<str:name>/", report.report_table, name="report_table"),
    path("reports/<int:pk>/export.<str:fmt>", downloads.report_export, name="report_export"),
    path("reports/<int:pk>/plots/<str:kind>.<str:fmt>", downloads.report_plot, name="report_plot"),
]
