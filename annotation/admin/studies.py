"""Surveys in the admin: their aspects and checks, HITs, annotators, assignments and link identities."""

from django.contrib import admin

from annotation import models


class AspectInline(admin.StackedInline):
    # Stacked: an aspect's question, definition and scale labels side by side in a table made the
    # survey's page 2,302 px wide in a 1,366 px window.
    model = models.Aspect
    extra = 0


@admin.register(models.Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "owner", "provider", "task_type", "status", "created_at"]
    list_filter = ["provider", "status", "task_type", "dataset"]
    search_fields = ["name", "dataset__name", "owner__username"]
    list_select_related = ["dataset", "owner"]
    raw_id_fields = ["dataset", "owner"]
    filter_horizontal = ["systems"]
    # The layout seed is what the HITs were laid out from: changed here, it would no longer say so.
    readonly_fields = ["token", "layout_seed", "created_at", "launched_at", "closed_at"]
    inlines = [AspectInline]


@admin.register(models.Aspect)
class AspectAdmin(admin.ModelAdmin):
    list_display = ["key", "survey", "scale_min", "scale_max", "position"]
    list_filter = ["key"]
    search_fields = ["key", "survey__name", "question"]
    list_select_related = ["survey"]
    raw_id_fields = ["survey"]


@admin.register(models.Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["worker_id", "provider", "created_at"]
    list_filter = ["provider"]
    search_fields = ["worker_id"]


@admin.register(models.AttentionCheck)
class AttentionCheckAdmin(admin.ModelAdmin):
    list_display = ["pk", "survey", "response_text", "accepted_scores"]
    list_filter = ["survey"]
    search_fields = ["response_text", "survey__name"]
    raw_id_fields = ["survey"]


@admin.register(models.HIT)
class HITAdmin(admin.ModelAdmin):
    list_display = ["pk", "survey", "position", "external_id", "created_at"]
    list_filter = ["survey__status", "survey"]
    search_fields = ["external_id", "survey__name"]
    list_select_related = ["survey"]
    raw_id_fields = ["survey"]


@admin.register(models.HITItem)
class HITItemAdmin(admin.ModelAdmin):
    list_display = ["hit", "position", "kind", "response", "is_overlap"]
    list_filter = ["kind", "is_overlap"]
    search_fields = ["hit__survey__name", "response__text"]
    list_select_related = ["hit__survey", "response"]
    # Every foreign key by id: a select would list every row (repeat_of: every HIT item of every
    # survey), which made an item's page take 27 s to draw (0.65 s by id).
    raw_id_fields = [
        "hit", "context", "response", "response_b", "attention_check", "repeat_of", "conversation", "conversation_b",
    ]  # fmt: skip


@admin.register(models.HITPage)
class HITPageAdmin(admin.ModelAdmin):
    """Rendered by the app, read for inspection only: an edited page would show annotators other items."""

    list_display = ["hit", "version", "n_items", "n_fields", "has_overlap"]
    list_filter = ["has_overlap"]
    search_fields = ["hit__survey__name", "version"]
    list_select_related = ["hit__survey"]
    readonly_fields = ["hit", "version", "html", "n_fields", "n_items", "has_overlap"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["pk", "hit", "slot", "annotator", "status", "flagged", "assigned_at", "submitted_at"]
    list_filter = ["status", "flagged", "hit__survey"]
    search_fields = ["annotator__worker_id", "external_id", "hit__survey__name"]
    list_select_related = ["hit__survey", "annotator"]
    raw_id_fields = ["hit", "annotator"]
    readonly_fields = ["token"]


@admin.register(models.LinkIdentity)
class LinkIdentityAdmin(admin.ModelAdmin):
    """Read-only: made by the survey link; the resume code's digest must never be edited by hand."""

    list_display = ["annotator", "survey", "address", "created_at"]
    search_fields = ["annotator__worker_id", "survey__name", "address"]
    list_select_related = ["annotator", "survey"]
    readonly_fields = ["annotator", "survey", "address", "created_at"]
    exclude = ["resume_code_hash"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
