"""Admin for every annotation model: for staff who inspect or repair data, not the researcher UI.

Foreign keys use raw id widgets: a select box of 50,000 responses would not render.
"""

from django.contrib import admin

from annotation import models


class AuditedReadOnly:
    """Rows that are evidence (what annotators answered, what researchers decided): shown, never
    edited or deleted here, since the admin keeps no trail of such a change. Corrections go through
    the pages and services that record who did what (exclusions, reviews)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReferenceInline(admin.TabularInline):
    model = models.Reference
    extra = 0


class AspectInline(admin.TabularInline):
    model = models.Aspect
    extra = 0


@admin.register(models.Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "created_at"]
    list_filter = ["owner", "created_at"]
    search_fields = ["name", "description", "owner__username"]
    raw_id_fields = ["owner"]
    date_hierarchy = "created_at"


@admin.register(models.Context)
class ContextAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "position", "n_turns"]
    list_filter = ["dataset"]
    search_fields = ["external_id", "dataset__name"]
    list_select_related = ["dataset"]
    raw_id_fields = ["dataset"]
    inlines = [ReferenceInline]

    @admin.display(description="Turns")
    def n_turns(self, obj):
        return len(obj.turns)


@admin.register(models.Reference)
class ReferenceAdmin(admin.ModelAdmin):
    list_display = ["context", "position", "text"]
    list_filter = ["context__dataset"]
    search_fields = ["text", "context__external_id"]
    list_select_related = ["context__dataset"]
    raw_id_fields = ["context"]


@admin.register(models.System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset"]
    list_filter = ["dataset"]
    search_fields = ["name", "dataset__name", "description"]
    list_select_related = ["dataset"]


@admin.register(models.Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["context", "system", "text"]
    list_filter = ["system__dataset", "system__name"]
    search_fields = ["text", "context__external_id", "system__name"]
    list_select_related = ["context__dataset", "system"]
    raw_id_fields = ["context", "system"]
    show_full_result_count = False


@admin.register(models.Survey)
class SurveyAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "owner", "provider", "task_type", "status", "created_at"]
    list_filter = ["provider", "status", "task_type", "dataset"]
    search_fields = ["name", "dataset__name", "owner__username"]
    list_select_related = ["dataset", "owner"]
    raw_id_fields = ["dataset", "owner"]
    filter_horizontal = ["systems"]
    readonly_fields = ["token", "created_at", "launched_at", "closed_at"]
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
    raw_id_fields = ["hit", "context", "response", "attention_check"]


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


@admin.register(models.MTurkSettings)
class MTurkSettingsAdmin(admin.ModelAdmin):
    list_display = ["survey", "sandbox", "hit_type_id", "last_synced_at"]
    list_filter = ["sandbox"]
    search_fields = ["survey__name", "title", "hit_type_id"]
    readonly_fields = ["exclusion_qualification_id", "hit_type_id", "last_synced_at"]


@admin.register(models.MTurkAssignment)
class MTurkAssignmentAdmin(admin.ModelAdmin):
    list_display = ["mturk_id", "worker_id", "status", "confirmed", "synced_at"]
    list_filter = ["status", "confirmed"]
    search_fields = ["mturk_id", "worker_id"]


@admin.register(models.MTurkDraft)
class MTurkDraftAdmin(admin.ModelAdmin):
    """A worker's answers so far, kept for the task page: read here, never edited."""

    list_display = ["assignment", "saved_at"]
    search_fields = ["assignment__external_id", "assignment__annotator__worker_id"]
    readonly_fields = ["assignment", "fields", "saved_at"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.MTurkExclusionQualification)
class MTurkExclusionQualificationAdmin(admin.ModelAdmin):
    list_display = ["qualification_type_id", "sandbox", "created_at"]
    search_fields = ["qualification_type_id"]


@admin.register(models.MTurkHIT)
class MTurkHITAdmin(admin.ModelAdmin):
    list_display = ["mturk_id", "hit", "status", "sandbox", "expires_at"]
    list_filter = ["status", "sandbox"]
    search_fields = ["mturk_id", "hit__survey__name"]
    list_select_related = ["hit__survey"]


@admin.register(models.MTurkBonus)
class MTurkBonusAdmin(admin.ModelAdmin):
    list_display = ["mturk_assignment", "amount_cents", "sent_at", "created_at"]
    search_fields = ["mturk_assignment__mturk_id", "mturk_assignment__worker_id", "reason"]


@admin.register(models.MTurkBlock)
class MTurkBlockAdmin(admin.ModelAdmin):
    list_display = ["annotator", "sandbox", "reason", "created_at"]
    list_filter = ["sandbox"]
    search_fields = ["annotator__worker_id", "reason"]


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


# Prolific rows, pairwise judgements and conversations live in their own modules (annotation/admin_prolific.py,
# annotation/admin_pairwise.py, annotation/admin_conversations.py).
from annotation import admin_conversations, admin_pairwise, admin_prolific  # noqa: E402, F401
