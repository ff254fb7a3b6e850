"""Best-worst judgements in the admin: evidence, so read-only like ratings and pairwise judgements.
Imported by annotation/admin/__init__.py."""

from django.contrib import admin

from annotation import models
from annotation.admin.base import AuditedReadOnly


@admin.register(models.BWSJudgement)
class BWSJudgementAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "annotator", "context", "best", "worst", "seconds"]
    list_filter = ["survey__provider", "survey"]
    search_fields = ["annotator__worker_id", "survey__name", "context__external_id"]
    list_select_related = ["survey", "annotator", "context"]
    raw_id_fields = ["survey", "annotator", "assignment", "item", "context", "best", "worst"]
    show_full_result_count = False
