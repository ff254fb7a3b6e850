import pytest
from django.contrib import admin
from django.urls import reverse

from annotation import models
from tests.annotation.files import SMALL_DATASET, SMALL_RATINGS
from tests.annotation.studies_helpers import make_survey
from tests.factories import load_dataset_records, load_rating_records

ANNOTATION_MODELS = [m for m in vars(models).values() if isinstance(m, type) and m._meta.app_label == "annotation"]


def test_every_annotation_model_is_in_the_admin():
    missing = [m.__name__ for m in ANNOTATION_MODELS if m not in admin.site._registry]
    assert missing == []
    assert len(ANNOTATION_MODELS) >= 15


@pytest.mark.parametrize("model", ANNOTATION_MODELS, ids=lambda m: m.__name__)
def test_admin_changelist_renders_with_search_and_filters(client, admin_user, model):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=admin_user)
    load_rating_records(records=SMALL_RATINGS, dataset=dataset, survey_name="study-ratings")
    client.force_login(admin_user)
    url = reverse(f"admin:annotation_{model._meta.model_name}_changelist")
    assert client.get(url).status_code == 200
    assert client.get(url, {"q": "c1"}).status_code == 200
    model_admin = admin.site._registry[model]
    assert model_admin.search_fields
    assert model_admin.list_display != ("__str__",)


READ_ONLY = [models.Rating, models.AttentionAnswer, models.ReviewAction, models.ExclusionDecision]


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda m: m.__name__)
def test_evidence_rows_are_read_only_in_the_admin(rf, admin_user, model):
    """Ratings and decisions are never edited or deleted silently: the admin keeps no audit trail."""
    request = rf.get("/")
    request.user = admin_user
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_a_rating_cannot_be_changed_through_the_admin(client, admin_user):
    dataset = load_dataset_records(records=SMALL_DATASET, name="study", owner=admin_user)
    load_rating_records(records=SMALL_RATINGS, dataset=dataset, survey_name="study-ratings")
    rating = models.Rating.objects.first()
    client.force_login(admin_user)
    url = reverse("admin:annotation_rating_change", args=[rating.pk])
    assert client.get(url).status_code == 200  # still readable
    response = client.post(url, {"score": 1 if rating.score != 1 else 5})
    before = rating.score
    rating.refresh_from_db()
    assert response.status_code == 403 and rating.score == before
    assert client.post(reverse("admin:annotation_rating_delete", args=[rating.pk]), {"post": "yes"}).status_code == 403
    assert models.Rating.objects.filter(pk=rating.pk).exists()


# Rows that grow with every study: an admin form's select would list all of them (a HIT item's page
# took 27 s to draw with a select of every HIT item for `repeat_of`).
GROWING = {"Response", "Context", "Assignment", "Annotator", "Conversation", "ConversationTurn", "HIT", "HITItem",
           "MTurkHIT", "MTurkAssignment", "ProlificSubmission", "WrittenResponse", "MetricRun"}  # fmt: skip


def test_no_admin_form_lists_every_row_of_a_growing_table(rf, admin_user):
    request = rf.get("/")
    request.user = admin_user
    listed = []
    for model, model_admin in admin.site._registry.items():
        if not (model_admin.has_change_permission(request) or model_admin.has_add_permission(request)):
            continue  # shown read-only: no form
        shown_by_id = [*model_admin.raw_id_fields, *model_admin.autocomplete_fields]
        by_id = {*shown_by_id, *model_admin.get_readonly_fields(request)}
        listed += [
            f"{model.__name__}.{field.name}"
            for field in model._meta.get_fields()
            if field.many_to_one or field.one_to_one
            if field.editable and field.concrete and field.related_model.__name__ in GROWING and field.name not in by_id
        ]
    assert listed == []


def test_a_hit_items_page_lists_no_other_items(client, admin_user):
    make_survey(admin_user, n_contexts=12)
    item = models.HITItem.objects.first()
    client.force_login(admin_user)
    page = client.get(reverse("admin:annotation_hititem_change", args=[item.pk])).content.decode()
    assert 'name="repeat_of"' in page and "<option" not in page.split('name="repeat_of"', 1)[1][:300]
