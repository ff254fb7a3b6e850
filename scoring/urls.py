from django.urls import path

from scoring import index_views, views, views_adem

app_name = "scoring"

urlpatterns = [
    path("metrics/", index_views.metrics_index, name="metrics_index"),
    path("datasets/<int:dataset_id>/metrics/", views.dataset_metrics, name="dataset_metrics"),
    path("runs/<int:run_id>/progress/", views.run_progress, name="run_progress"),
    path("adem/", views_adem.model_list, name="adem_models"),
    path("adem/train/", views_adem.train, name="adem_train"),
    path("adem/experiments/", views_adem.experiments, name="adem_experiments"),
    path("adem/pretrain/", views_adem.pretrain, name="adem_pretrain"),
    path("adem/runs/<int:run_id>/", views_adem.run_detail, name="adem_run"),
    path("adem/runs/<int:run_id>/progress.json", views_adem.run_progress, name="adem_run_progress"),
    path("adem/runs/<int:run_id>/curve.svg", views_adem.run_curve, name="adem_run_curve"),
    path("adem/<str:name>/", views_adem.model_detail, name="adem_model"),
    path("adem/<str:name>/score", views_adem.score_api, name="adem_score"),
]
