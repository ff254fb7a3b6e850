"""Admin for the scoring models: for staff who inspect results, not for editing them.

Scores, runs and trained models are results: an edited value would silently disagree with the
checkpoint, the chunks or the report that produced it, so every field is read-only and nothing is
added here (training, computing and token creation happen on the researcher pages, which show
what they started). Deleting stays possible where it loses no one else's data, for clean-up.
Each row links to the researcher page that shows it rendered.
"""

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.utils import model_ngettext
from django.db import models, transaction
from django.db.models import BooleanField, Case, ExpressionWrapper, Value, When
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from scoring.models import (
    AdemModel,
    ApiToken,
    Judge,
    JudgeCacheEntry,
    JudgeUsage,
    MetricChunk,
    MetricRun,
    MetricScore,
    TrainingRun,
)
from scoring.models.metrics import ConversationMetricScore, TurnMetricScore
from scoring.services.adem.delete import AdemModelBusy, adem_model_delete
from scoring.services.judges.remove import JudgeBusy, judge_delete


class ReadOnlyAdmin(admin.ModelAdmin):
    """Every field shown, none editable, nothing added by hand."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


def _page_link(url, text="Open page"):
    return format_html('<a href="{}">{}</a>', url, text)


class DeletedByServiceAdmin(ReadOnlyAdmin):
    """Deleting goes through the researcher page's service (`service_delete`), so the rows that hang
    on the object by name (its `adem:<name>` / `judge:<name>` scores) and its files go too, and it is
    refused as there (`refusal`) while a job uses it: the error says why, and Django's "deleted
    successfully" is not shown for an object still there."""

    refusal = ()

    def service_delete(self, obj):
        raise NotImplementedError

    def delete_model(self, request, obj):
        try:
            self.service_delete(obj)
        except self.refusal as busy:
            self.message_user(request, str(busy), messages.ERROR)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)

    def get_actions(self, request):
        # Django's own "delete selected" says "Successfully deleted N" of every selected object,
        # also of those the service refused; this one counts only what went, and names the rest.
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            _, name, description = actions["delete_selected"]
            actions["delete_selected"] = (_delete_selected_by_service, name, description)
        return actions

    def response_delete(self, request, obj_display, obj_id):
        if self.model.objects.filter(pk=obj_id).exists():
            meta = self.model._meta
            return redirect(f"admin:{meta.app_label}_{meta.model_name}_change", obj_id)
        return super().response_delete(request, obj_display, obj_id)


def _delete_selected_by_service(modeladmin, request, queryset):
    """The bulk delete of a DeletedByServiceAdmin: Django's confirm page first (and its refusal of
    protected rows or missing permissions), then each object through the service, one at a time;
    a refused one stays, with its reason as an error, and the success message counts the others."""
    _, _, perms_needed, protected = modeladmin.get_deleted_objects(queryset, request)
    if not request.POST.get("post") or perms_needed or protected:
        return delete_selected(modeladmin, request, queryset)
    deleted = 0
    for obj in queryset:
        try:
            with transaction.atomic():  # the log entry goes back with a refusal
                modeladmin.log_deletions(request, [obj])
                modeladmin.service_delete(obj)
        except modeladmin.refusal as busy:
            modeladmin.message_user(request, f"Not deleted: {busy}", messages.ERROR)
        else:
            deleted += 1
    if deleted:
        items = model_ngettext(modeladmin.opts, deleted)
        modeladmin.message_user(request, f"Successfully deleted {deleted} {items}.", messages.SUCCESS)
    return None


@admin.register(AdemModel)
class AdemModelAdmin(DeletedByServiceAdmin):
    list_display = ["name", "owner", "dataset", "encoder", "variant", "status", "test_pearson", "created_at", "page"]
    list_filter = ["status", "encoder", "variant", "precision"]
    search_fields = ["name", "owner__username", "dataset__name"]
    list_select_related = ["owner", "dataset"]
    date_hierarchy = "created_at"

    @admin.display(description="Test Pearson r")
    def test_pearson(self, obj):
        value = (obj.results.get("test") or {}).get("pearson")
        return "—" if value is None else f"{value:.3f}"

    @admin.display(description="Researcher page")
    def page(self, obj):
        return _page_link(reverse("scoring:adem_model", args=[obj.pk]))

    def view_on_site(self, obj):
        return reverse("scoring:adem_model", args=[obj.pk])

    refusal = AdemModelBusy

    def service_delete(self, obj):
        adem_model_delete(model=obj)


@admin.register(TrainingRun)
class TrainingRunAdmin(ReadOnlyAdmin):
    list_display = ["pk", "kind", "owner", "adem_model", "dataset", "status", "created_at", "updated_at", "page"]
    list_filter = ["kind", "status"]
    search_fields = ["owner__username", "adem_model__name", "dataset__name", "error"]
    list_select_related = ["owner", "adem_model", "dataset"]
    date_hierarchy = "created_at"

    @admin.display(description="Progress page")
    def page(self, obj):
        return _page_link(reverse("scoring:adem_run", args=[obj.pk]))

    def view_on_site(self, obj):
        return reverse("scoring:adem_run", args=[obj.pk])


class MetricChunkInline(admin.TabularInline):
    model = MetricChunk
    fields = ["index", "status", "attempts", "finished_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(MetricRun)
class MetricRunAdmin(ReadOnlyAdmin):
    list_display = ["pk", "dataset", "status", "chunks", "total_responses", "created_by", "created_at", "page"]
    list_filter = ["status"]
    search_fields = ["dataset__name", "created_by__username", "error"]
    list_select_related = ["dataset", "created_by"]
    date_hierarchy = "created_at"
    inlines = [MetricChunkInline]

    @admin.display(description="Chunks done")
    def chunks(self, obj):
        return f"{obj.done_chunks}/{obj.total_chunks}"

    @admin.display(description="Metrics page")
    def page(self, obj):
        return _page_link(reverse("scoring:dataset_metrics", args=[obj.dataset_id]))

    def view_on_site(self, obj):
        return reverse("scoring:dataset_metrics", args=[obj.dataset_id])


@admin.register(MetricChunk)
class MetricChunkAdmin(ReadOnlyAdmin):
    list_display = ["run", "index", "status", "attempts", "finished_at"]
    list_filter = ["status"]
    search_fields = ["run__dataset__name"]
    list_select_related = ["run__dataset"]
    show_full_result_count = False


@admin.register(MetricScore)
class MetricScoreAdmin(ReadOnlyAdmin):
    """Millions of rows: no filters (each would scan the table), exact search by metric name only."""

    list_display = ["response_id", "metric", "value", "version", "computed_at"]
    search_fields = ["=metric"]
    show_full_result_count = False

    def has_delete_permission(self, request, obj=None):
        return False  # a deleted score would be recomputed silently; delete the dataset instead


@admin.register(ConversationMetricScore)
class ConversationMetricScoreAdmin(ReadOnlyAdmin):
    """A conversation's reference-free scores (compute_conversation_metrics), read-only like response
    scores: a run replaces a dataset's scores whole, so a hand edit would be silently undone."""

    list_display = ["conversation_id", "metric", "value", "version", "computed_at"]
    search_fields = ["=metric"]
    show_full_result_count = False

    def has_delete_permission(self, request, obj=None):
        return False  # delete the dataset (or rerun the command) instead


@admin.register(TurnMetricScore)
class TurnMetricScoreAdmin(ReadOnlyAdmin):
    """A bot turn's scores with the conversation so far as context (compute_conversation_metrics),
    read-only for the same reason as a conversation's scores."""

    list_display = ["turn_id", "metric", "value", "version", "computed_at"]
    search_fields = ["=metric"]
    show_full_result_count = False

    def has_delete_permission(self, request, obj=None):
        return False  # delete the dataset (or rerun the command) instead


@admin.register(ApiToken)
class ApiTokenAdmin(ReadOnlyAdmin):
    """Tokens are made on the researcher's API tokens page (the key is shown there once); deleting
    one here revokes it."""

    list_display = ["name", "user", "created_at", "last_used_at"]
    search_fields = ["name", "user__username"]
    list_select_related = ["user"]
    fields = ["name", "user", "created_at", "last_used_at"]  # not even the key's hash
    readonly_fields = fields


@admin.register(Judge)
class JudgeAdmin(DeletedByServiceAdmin):
    """Judges are added on the researcher's Judges page (or `judge_add`); the key's variable is a name,
    never the key. Deleting one here deletes its cached answers with it."""

    list_display = ["name", "owner", "model", "template", "samples", "concurrency", "created_at", "page"]
    list_filter = ["template"]
    search_fields = ["name", "owner__username", "model"]
    list_select_related = ["owner"]
    # as the researcher's form (scoring/forms/judges.py): local servers are usually plain http; and
    # naming the scheme keeps Django 6's change of the default out of the admin's form
    formfield_overrides = {models.URLField: {"assume_scheme": "http"}}

    # A judge's page is its owner's alone (scoring.selectors.judges.judges_visible_to: it names an endpoint
    # and a key variable), superusers included: the link is offered on the viewer's own judges only,
    # where it opens; another's row says whose page it is instead of linking to a 404.
    def get_queryset(self, request):
        mine = Case(When(owner_id=request.user.pk, then=Value(True)), default=Value(False))
        return super().get_queryset(request).annotate(viewer_owns=ExpressionWrapper(mine, output_field=BooleanField()))

    @admin.display(description="Researcher page")
    def page(self, obj):
        if not getattr(obj, "viewer_owns", False):
            return format_html("only {} opens it", obj.owner)
        return _page_link(reverse("scoring:judge_detail", args=[obj.pk]))

    def view_on_site(self, obj):
        return reverse("scoring:judge_detail", args=[obj.pk]) if getattr(obj, "viewer_owns", False) else None

    # Through the service, as the researcher's Remove button does: the judge's scores (metric
    # judge:<name>) go too, or a later judge of the same name would show them as its own.
    refusal = JudgeBusy

    def service_delete(self, obj):
        judge_delete(judge=obj)


@admin.register(JudgeCacheEntry)
class JudgeCacheEntryAdmin(ReadOnlyAdmin):
    """One row per prompt a judge answered: many rows, so no filters, exact search by prompt hash."""

    list_display = ["judge", "template_version", "prompt_hash", "mean", "spread", "created_at"]
    search_fields = ["=prompt_hash"]
    list_select_related = ["judge"]
    show_full_result_count = False


@admin.register(JudgeUsage)
class JudgeUsageAdmin(ReadOnlyAdmin):
    list_display = ["judge", "run", "label", "prompts", "cached", "requests", "unparseable", "created_at"]
    search_fields = ["judge__name", "label"]
    list_select_related = ["judge", "run"]
