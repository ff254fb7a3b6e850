"""MTurk rows in the admin: settings, HITs, assignments, drafts, bonuses, blocks and the exclusion qualification."""

from django.contrib import admin

from annotation import models


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
    raw_id_fields = ["mturk_hit", "assignment"]


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
    raw_id_fields = ["hit"]


@admin.register(models.MTurkBonus)
class MTurkBonusAdmin(admin.ModelAdmin):
    list_display = ["mturk_assignment", "amount_cents", "sent_at", "created_at"]
    search_fields = ["mturk_assignment__mturk_id", "mturk_assignment__worker_id", "reason"]
    raw_id_fields = ["mturk_assignment"]


@admin.register(models.MTurkBlock)
class MTurkBlockAdmin(admin.ModelAdmin):
    list_display = ["annotator", "sandbox", "reason", "created_at"]
    list_filter = ["sandbox"]
    search_fields = ["annotator__worker_id", "reason"]
    raw_id_fields = ["annotator"]
