"""Datasets in the admin: contexts, references, systems and responses, as imported."""

from django.contrib import admin

from annotation import models


class ReferenceInline(admin.TabularInline):
    model = models.Reference
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
