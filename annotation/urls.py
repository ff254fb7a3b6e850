from django.urls import path, re_path

from annotation.kinds.chat import views as chat_views
from annotation.views import (
    chat_systems,
    consent,
    consent_researcher,
    conversations,
    datasets,
    datasheet,
    deletion,
    drafts,
    quality,
    survey_aspects,
    survey_extend,
    survey_written,
    surveys,
    task,
)
from annotation.views.crowd import link_entry, link_survey, mturk, prolific_entry, prolific_survey

app_name = "annotation"

urlpatterns = [
    path("datasets/", datasets.dataset_list, name="dataset_list"),
    path("datasets/upload/", datasets.dataset_upload, name="dataset_upload"),
    path("datasets/<int:pk>/", datasets.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/delete/", deletion.dataset_delete_view, name="dataset_delete"),
    path("datasets/<int:pk>/ratings/upload/", datasets.ratings_upload, name="ratings_upload"),
    path("datasets/<int:pk>/contexts/<int:context_pk>/scores/", datasets.context_scores, name="context_scores"),
    path("datasets/<int:pk>/conversations/", conversations.conversation_list, name="conversation_list"),
    path(
        "datasets/<int:pk>/conversations/<int:conversation_pk>/",
        conversations.conversation_detail,
        name="conversation_detail",
    ),
    re_path(
        r"^datasets/(?P<pk>[0-9]+)/download/conversations\.(?P<fmt>jsonl|csv)$",
        conversations.conversations_download,
        name="conversations_download",
    ),
    re_path(
        r"^datasets/(?P<pk>[0-9]+)/download/(?P<what>dataset|ratings)\.(?P<fmt>jsonl|csv)$",
        datasets.dataset_download,
        name="dataset_download",
    ),
    # Researcher pages (login required, own surveys only).
    path("surveys/", surveys.survey_list, name="survey_list"),
    path("surveys/chat-systems/", chat_systems.chat_system_list, name="chat_system_list"),
    path("surveys/chat-systems/add/", chat_systems.chat_system_add, name="chat_system_add"),
    path("surveys/chat-systems/<int:pk>/", chat_systems.chat_system_edit, name="chat_system_edit"),
    path("surveys/chat-systems/<int:pk>/test/", chat_systems.chat_system_test, name="chat_system_test"),
    path("surveys/chat-systems/<int:pk>/remove/", chat_systems.chat_system_remove, name="chat_system_remove"),
    path("surveys/new/", surveys.survey_new, name="survey_new"),
    path("surveys/<int:pk>/", surveys.survey_detail, name="survey_detail"),
    path("surveys/<int:pk>/delete/", deletion.survey_delete_view, name="survey_delete"),
    path("surveys/<int:pk>/edit/", drafts.survey_edit, name="survey_edit"),
    path("surveys/<int:pk>/progress.json", surveys.survey_progress_json, name="survey_progress_json"),
    path("surveys/<int:pk>/aspects/", survey_aspects.survey_aspects, name="survey_aspects"),
    path("surveys/<int:pk>/preview/", surveys.survey_preview, name="survey_preview"),
    path("surveys/<int:pk>/extend/", survey_extend.survey_extend_view, name="survey_extend"),
    path("surveys/<int:pk>/ratings.jsonl", surveys.survey_export, name="survey_export"),
    path("surveys/<int:pk>/ratings.csv", surveys.survey_export, {"fmt": "csv"}, name="survey_export_csv"),
    re_path(
        r"^surveys/(?P<pk>[0-9]+)/questionnaires\.(?P<fmt>jsonl|csv)$",
        consent_researcher.questionnaire_export,
        name="questionnaire_export",
    ),
    path("surveys/<int:pk>/participants/delete/", consent_researcher.participant_deletion, name="participant_deletion"),
    re_path(
        r"^surveys/(?P<pk>[0-9]+)/datasheet\.(?P<fmt>md|json|latex)$",
        datasheet.survey_datasheet,
        name="survey_datasheet",
    ),
    path("surveys/<int:pk>/written/", survey_written.survey_written, name="survey_written"),
    path(
        "surveys/<int:pk>/written/<int:written_pk>/", survey_written.survey_written_reply, name="survey_written_reply"
    ),
    path("surveys/<int:pk>/annotators/<int:annotator_pk>/", surveys.survey_annotator, name="survey_annotator"),
    path("surveys/<int:pk>/annotators/<int:annotator_pk>/review/", surveys.survey_review, name="survey_review"),
    re_path(
        r"^surveys/(?P<pk>[0-9]+)/(?P<action>launch|pause|close|reopen)/$", surveys.survey_action, name="survey_action"
    ),
    # Annotator pages (the link is the credential).
    path("s/<str:token>/", task.survey_entry, name="task_entry"),
    path("c/<str:token>/consent/", consent.consent_page, name="consent_page"),
    path("c/<str:token>/questions/<str:phase>/", consent.questionnaire_page, name="questionnaire_page"),
    path("a/<str:token>/", task.assignment_page, name="task_assignment"),
    path("a/<str:token>/done/", task.assignment_done, name="task_done"),
    path("a/<str:token>/chat/", chat_views.chat_api, name="task_chat"),
    path("mturk/<str:token>/", mturk.mturk_task, name="mturk_task"),
    path("mturk/<str:token>/draft/", mturk.mturk_draft, name="mturk_draft"),
    path("mturk/<str:token>/chat/", chat_views.mturk_chat_api, name="mturk_chat"),
    path("p/<str:token>/", prolific_entry.prolific_entry, name="prolific_entry"),
    path("p/<str:token>/finish/", prolific_entry.prolific_finish, name="prolific_finish"),
    path("prolific/hooks/", prolific_entry.prolific_webhook, name="prolific_webhook"),
    path("l/<str:token>/", link_entry.link_entry, name="link_entry"),
    path("l/<str:token>/finish/", link_entry.link_finish, name="link_finish"),
    path("surveys/<int:pk>/prolific/", prolific_survey.prolific_survey, name="prolific_survey"),
    path("surveys/<int:pk>/prolific/action/", prolific_survey.prolific_action, name="prolific_action"),
    path("surveys/<int:pk>/link/", link_survey.link_survey, name="link_survey"),
    path("surveys/<int:pk>/link/action/", link_survey.link_action, name="link_action"),
    path("surveys/<int:pk>/mturk/", mturk.mturk_survey, name="mturk_survey"),
    path("surveys/<int:pk>/mturk/action/", mturk.mturk_action, name="mturk_action"),
    path("quality/", quality.quality_index, name="quality_index"),
    path("surveys/<int:survey_id>/quality/", quality.survey_quality, name="quality_survey"),
    path(
        "surveys/<int:survey_id>/quality/annotators/<int:annotator_id>/",
        quality.annotator_quality,
        name="quality_annotator",
    ),
    path(
        "surveys/<int:survey_id>/quality/annotators/<int:annotator_id>/override/",
        quality.annotator_override,
        name="quality_override",
    ),
]
