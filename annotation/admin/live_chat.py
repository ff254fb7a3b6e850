"""Live chats in the admin (issue 38), read-only: a chat's settings are the survey form's, and its
attempts and turns are what annotators and the chat system said, evidence like ratings. Imported
by __init__.py."""

from django.contrib import admin

from annotation import models
from annotation.admin.base import AuditedReadOnly


@admin.register(models.ChatSurveySettings)
class ChatSurveySettingsAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "opening", "min_turns", "max_turns", "conversations_per_system"]
    list_filter = ["opening"]
    search_fields = ["survey__name"]
    raw_id_fields = ["survey"]


@admin.register(models.ChatHIT)
class ChatHITAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "hit", "chat_system", "system"]
    search_fields = ["hit__survey__name", "chat_system__name", "system__name"]
    list_select_related = ["hit", "chat_system", "system"]
    raw_id_fields = ["hit", "chat_system", "system"]


@admin.register(models.LiveChat)
class LiveChatAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "assignment", "annotator", "chat_system", "ended_at", "created_at"]
    search_fields = ["annotator__worker_id", "chat_system__name", "conversation__external_id"]
    list_select_related = ["assignment", "annotator", "chat_system"]
    raw_id_fields = ["assignment", "annotator", "conversation", "chat_system"]


@admin.register(models.ChatAttempt)
class ChatAttemptAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "live_chat", "user_turn", "number", "status", "failure", "seconds", "started_at"]
    list_filter = ["status", "retry"]
    search_fields = ["failure", "client_key"]
    raw_id_fields = ["live_chat"]
