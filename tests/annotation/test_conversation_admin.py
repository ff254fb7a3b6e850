"""Conversation ratings and comparisons are evidence: readable in the admin, never changed there."""

import pytest
from django.contrib import admin

from annotation import models


@pytest.mark.parametrize("model", [models.ConversationRating, models.ConversationJudgement], ids=lambda m: m.__name__)
def test_conversation_answers_are_read_only_in_the_admin(rf, admin_user, model):
    request = rf.get("/")
    request.user = admin_user
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
