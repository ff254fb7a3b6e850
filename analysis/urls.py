from django.urls import path

from analysis import index_views, views

app_name = "analysis"

urlpatterns = [
    path("reports/", index_views.reports_index, name="reports_index"),
    path("datasets/<int:dataset_id>/report/", views.dataset_report, name="dataset_report"),
    path("surveys/<int:survey_id>/report/", views.survey_report, name="survey_report"),
    path("reports/<int:pk>/export.<str:fmt>", views.report_export, name="report_export"),
    path("reports/<int:pk>/plots/<str:kind>.<str:fmt>", views.report_plot, name="report_plot"),
]
