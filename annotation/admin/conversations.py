"""Conversations in the admin; their ratings and comparisons are evidence, so read-only like ratings.
Imported by annotation/admin/__init__.py."""

from django.contrib import admin
from django.db import models as django_models
from django.forms import Textarea

from annotation import models
from annotation.admin.base import AuditedReadOnly


class ConversationTurnInline(admin.TabularInline):
    model = models.ConversationTurn
    extra = 0
    # Django's default text box (40 columns) made the conversation's page 1,446 px wide in a 1,366 px
    # window; three lines show most turns whole, and the box grows by dragging.
    formfield_overrides = {django_models.TextField: {"widget": Textarea(attrs={"rows": 3, "cols": 30})}}


@admin.register(models.Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "system", "seed", "source", "position"]
    list_filter = ["source", "dataset"]
    search_fields = ["external_id", "seed", "dataset__name", "system__name"]
    list_select_related = ["dataset", "system"]
    raw_id_fields = ["dataset", "system"]
    inlines = [ConversationTurnInline]
    show_full_result_count = False


@admin.register(models.ConversationTurn)
class ConversationTurnAdmin(admin.ModelAdmin):
    list_display = ["pk", "conversation", "index", "speaker"]
    list_filter = ["speaker"]
    search_fields = ["conversation__external_id", "text"]
    list_select_related = ["conversation__dataset"]
    raw_id_fields = ["conversation"]
    show_full_result_count = False


@admin.register(models.ConversationAspect)
class ConversationAspectAdmin(admin.ModelAdmin):
    list_display = ["key", "dataset", "scale_min", "scale_max"]
    search_fields = ["key", "dataset__name"]
    list_select_related = ["dataset"]


@admin.register(models.ConversationRating)
class ConversationRatingAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "conversation", "turn", "annotator", "aspect", "score", "seconds", "created_at"]
    list_filter = ["aspect", "score", "annotator__provider"]
    search_fields = ["annotator__worker_id", "conversation__external_id", "conversation__dataset__name"]
    list_select_related = ["conversation__dataset", "turn__conversation__dataset", "annotator"]
    raw_id_fields = ["conversation", "turn", "annotator"]
    show_full_result_count = False


@admin.register(models.ConversationJudgement)
class ConversationJudgementAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "conversation_a", "conversation_b", "annotator", "winner", "question", "position_known"]
    list_filter = ["winner", "position_known", "annotator__provider"]
    search_fields = ["annotator__worker_id", "conversation_a__external_id", "conversation_b__external_id", "question"]
    list_select_related = ["conversation_a__dataset", "conversation_b__dataset", "annotator"]
    raw_id_fields = ["conversation_a", "conversation_b", "annotator"]
    show_full_result_count = False
