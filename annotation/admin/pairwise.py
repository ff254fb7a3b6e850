"""Pairwise judgements in the admin: evidence, so read-only like ratings. Imported by annotation/admin/__init__.py."""

from django.contrib import admin

from annotation import models
from annotation.admin.base import AuditedReadOnly


@admin.register(models.PairwiseJudgement)
class PairwiseJudgementAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "annotator", "context", "aspect", "winner", "strength", "position_known"]
    list_filter = ["aspect", "winner", "strength", "position_known", "survey__provider", "survey"]
    search_fields = ["annotator__worker_id", "survey__name", "context__external_id"]
    list_select_related = ["survey", "annotator", "context"]
    raw_id_fields = ["survey", "annotator", "context", "response_a", "response_b", "assignment"]
    show_full_result_count = False
