"""Consent and questionnaires in the admin. Answers and consent records are evidence, and a
deletion's audit line must not be edited: all read-only here (researchers set consent up and delete
a participant's data on their own pages, which write the audit line). Imported by __init__.py."""

from django.contrib import admin

from annotation import models
from annotation.admin.base import AuditedReadOnly


@admin.register(models.SurveyConsent)
class SurveyConsentAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "consent_version", "updated_at"]
    search_fields = ["survey__name", "consent_version"]
    raw_id_fields = ["survey"]


@admin.register(models.ConsentResponse)
class ConsentResponseAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "annotator", "version", "accepted", "created_at"]
    list_filter = ["accepted"]
    search_fields = ["survey__name", "annotator__worker_id", "version"]
    list_select_related = ["survey", "annotator"]
    raw_id_fields = ["survey", "annotator"]


@admin.register(models.QuestionnaireResponse)
class QuestionnaireResponseAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "annotator", "phase", "created_at"]
    list_filter = ["phase"]
    search_fields = ["survey__name", "annotator__worker_id"]
    list_select_related = ["survey", "annotator"]
    raw_id_fields = ["survey", "annotator"]


@admin.register(models.ParticipantDeletion)
class ParticipantDeletionAdmin(AuditedReadOnly, admin.ModelAdmin):
    list_display = ["pk", "survey", "pseudonym", "requested_by", "created_at"]
    search_fields = ["survey__name", "pseudonym", "note"]
    list_select_related = ["survey", "requested_by"]
    raw_id_fields = ["survey", "requested_by"]
