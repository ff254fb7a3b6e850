"""Prolific and link-and-code platform rows in the admin: read-only where they mirror what the
platform said (a Prolific bonus row guards a payment: editing it by hand could pay twice).
Imported by annotation/admin/__init__.py."""

from django.contrib import admin

from annotation import models


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.ProlificStudy)
class ProlificStudyAdmin(ReadOnlyAdmin):
    list_display = ["survey", "study_id", "status", "reward_cents", "estimated_minutes", "currency", "last_synced_at"]
    list_filter = ["status", "currency"]
    search_fields = ["survey__name", "study_id"]


@admin.register(models.ProlificSubmission)
class ProlificSubmissionAdmin(ReadOnlyAdmin):
    list_display = ["session_id", "participant_id", "study", "status", "confirmed", "synced_at"]
    list_filter = ["status", "confirmed"]
    search_fields = ["session_id", "participant_id", "study__survey__name"]
    list_select_related = ["study__survey"]


@admin.register(models.ProlificBonus)
class ProlificBonusAdmin(ReadOnlyAdmin):
    list_display = ["submission", "amount_cents", "bulk_id", "pay_sent_at", "paid_at"]
    search_fields = ["submission__participant_id", "submission__session_id", "bulk_id", "key"]


@admin.register(models.ProlificWebhookEvent)
class ProlificWebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "event_type", "received_at"]
    list_filter = ["event_type"]
    search_fields = ["event_id"]


@admin.register(models.LinkPlatform)
class LinkPlatformAdmin(admin.ModelAdmin):
    list_display = ["survey", "participant_param", "completion_url"]
    search_fields = ["survey__name", "completion_url"]


@admin.register(models.LinkParticipant)
class LinkParticipantAdmin(ReadOnlyAdmin):
    list_display = ["participant_id", "survey", "confirmed", "created_at"]
    list_filter = ["confirmed"]
    search_fields = ["participant_id", "survey__name"]


@admin.register(models.ProlificBlockList)
class ProlificBlockListAdmin(ReadOnlyAdmin):
    list_display = ["owner", "group_id", "created_at"]
    search_fields = ["owner__username", "group_id"]
