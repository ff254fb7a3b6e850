"""Chat systems in the admin, for staff who inspect them. The key variable is a name only (the key
itself lives in the environment, never in the database), so nothing secret is shown here; researchers
add and edit their systems on their own pages (annotation/views/chat_systems.py), where the host and
key rules are checked."""

from django.contrib import admin

from annotation import models


@admin.register(models.ChatSystem)
class ChatSystemAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "model", "base_url", "api_key_env", "created_at"]
    search_fields = ["name", "model", "base_url", "owner__username"]
    list_select_related = ["owner"]
    raw_id_fields = ["owner"]

    def has_add_permission(self, request):
        return False  # added on the researcher's page, where the outbound-host and key rules apply

    def has_change_permission(self, request, obj=None):
        return False  # an edit here would skip those rules
