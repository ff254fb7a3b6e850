"""What annotators answered and what researchers decided about it, in the admin: evidence, so read-only."""

from django.contrib import admin

from annotation import models
from annotation.admin.base import AuditedReadOnly


@admin.register(models.Rating)
class RatingAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "annotator", "response", "aspect", "score", "seconds", "created_at"]
    list_filter = ["aspect", "score", "survey__provider", "survey"]
    search_fields = ["annotator__worker_id", "survey__name", "response__context__external_id"]
    list_select_related = ["survey", "annotator", "response"]
    raw_id_fields = ["survey", "annotator", "response", "assignment"]
    show_full_result_count = False


@admin.register(models.AttentionAnswer)
class AttentionAnswerAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "assignment", "item", "score", "passed", "seconds"]
    list_filter = ["passed"]
    search_fields = ["assignment__annotator__worker_id"]
    raw_id_fields = ["assignment", "item"]


@admin.register(models.WrittenResponse)
class WrittenResponseAdmin(admin.ModelAdmin):
    list_display = ["pk", "context", "status", "text", "created_at"]
    list_filter = ["status"]
    search_fields = ["text", "context__external_id", "assignment__annotator__worker_id"]
    raw_id_fields = ["assignment", "item", "context", "response"]


@admin.register(models.ReviewAction)
class ReviewActionAdmin(AuditedReadOnly, admin.ModelAdmin):
    """The audit trail is read-only here: decisions are made on the survey pages, never edited later."""

    list_display = ["created_at", "survey", "annotator", "action", "actor", "reason"]
    list_filter = ["action"]
    search_fields = ["reason", "annotator__worker_id"]


@admin.register(models.ExclusionDecision)
class ExclusionDecisionAdmin(admin.ModelAdmin):
    """Read-only: decisions are an audit trail, made on the quality pages (services), never edited."""

    list_display = ["survey", "annotator", "excluded", "source", "decided_by", "created_at"]
    list_filter = ["source", "excluded"]
    search_fields = ["annotator__worker_id", "survey__name", "note"]
    list_select_related = ["survey", "annotator", "decided_by"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.QualityReport)
class QualityReportAdmin(admin.ModelAdmin):
    """Read-only: the cache of a survey's quality report, rebuilt by `recompute_quality`."""

    list_display = ["survey", "computed_at", "seconds", "fingerprint"]
    search_fields = ["survey__name"]
    list_select_related = ["survey"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
