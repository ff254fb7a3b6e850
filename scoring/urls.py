from django.urls import path

from scoring.views import adem as views_adem
from scoring.views import conversation_metrics as views_conversations
from scoring.views import index as views_index
from scoring.views import judges as views_judges
from scoring.views import learned as views_learned
from scoring.views import metrics as views
from scoring.views import tokens as views_tokens

app_name = "scoring"

urlpatterns = [
    path("metrics/", views_index.metrics_index, name="metrics_index"),
    path("datasets/<int:dataset_id>/metrics/", views.dataset_metrics, name="dataset_metrics"),
    path(
        "datasets/<int:dataset_id>/conversation-metrics/",
        views_conversations.conversation_metrics_compute,
        name="conversation_metrics_compute",
    ),
    path("runs/<int:run_id>/progress/", views.run_progress, name="run_progress"),
    path("judges/", views_judges.judge_list, name="judges"),
    path("judges/<int:judge_id>/", views_judges.judge_detail, name="judge_detail"),
    path("judges/<int:judge_id>/progress/", views_judges.judge_progress, name="judge_progress"),
    path("judges/<int:judge_id>/remove/", views_judges.judge_remove, name="judge_remove"),
    path("judges/<int:judge_id>/pairs/", views_judges.judge_dataset_pairs, name="judge_dataset_pairs"),
    path(
        "judges/<int:judge_id>/conversations/",
        views_judges.judge_dataset_conversations,
        name="judge_dataset_conversations",
    ),
    path("adem/", views_adem.model_list, name="adem_models"),
    path("adem/train/", views_adem.train, name="adem_train"),
    path("adem/train/learned/", views_learned.train, name="learned_train"),
    path("adem/experiments/", views_adem.experiments, name="adem_experiments"),
    path("adem/pretrain/", views_adem.pretrain, name="adem_pretrain"),
    path("adem/tokens/", views_tokens.token_list, name="api_tokens"),
    path("adem/tokens/<int:token_id>/revoke/", views_tokens.token_revoke, name="api_token_revoke"),
    path("adem/runs/<int:run_id>/", views_adem.run_detail, name="adem_run"),
    path("adem/runs/<int:run_id>/progress.json", views_adem.run_progress, name="adem_run_progress"),
    path("adem/runs/<int:run_id>/curve.svg", views_adem.run_curve, name="adem_run_curve"),
    # Models by primary key: names are unique per owner only, and staff read everyone's.
    path("adem/models/<int:model_id>/", views_adem.model_detail, name="adem_model"),
    path("adem/models/<int:model_id>/delete/", views_adem.model_delete, name="adem_model_delete"),
    path("adem/models/<int:model_id>/score", views_adem.score_api, name="adem_model_score"),
    # By name: always the caller's own model (scripts, old links).
    path("adem/<str:name>/", views_adem.model_by_name, name="adem_model_by_name"),
    path("adem/<str:name>/score", views_adem.score_api, name="adem_score"),
]
