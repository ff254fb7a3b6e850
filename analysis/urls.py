from django.urls import path

from analysis import download_views, index_views, views

app_name = "analysis"

urlpatterns = [
    path("reports/", index_views.reports_index, name="reports_index"),
    path("datasets/<int:dataset_id>/report/", views.dataset_report, name="dataset_report"),
    path("surveys/<int:survey_id>/report/", views.survey_report, name="survey_report"),
    path("reports/<int:pk>/status.json", views.report_status, name="report_status"),
    path("reports/<int:pk>/refresh/", views.report_refresh, name="report_refresh"),
    path("reports/<int:pk>/tables/<str:name>/", views.report_table, name="report_table"),
    path("reports/<int:pk>/export.<str:fmt>", download_views.report_export, name="report_export"),
    path("reports/<int:pk>/plots/<str:kind>.<str:fmt>", download_views.report_plot, name="report_plot"),
]
