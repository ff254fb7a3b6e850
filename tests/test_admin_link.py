"""The top bar's Admin link is shown only to users the admin has something to show (F25)."""

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(django_user_model):
    """Staff, as the walk's admin made one: no model permission at all."""
    return django_user_model.objects.create_user("stan", password="x", is_staff=True)


ADMIN_LINK = '<a href="/admin/">Admin</a>'


def top_bar(client, user):
    client.force_login(user)
    return client.get(reverse("annotation:dataset_list")).content.decode()


def test_a_staff_user_without_any_permission_gets_no_admin_link(client, staff):
    assert not staff.get_all_permissions()
    assert ADMIN_LINK not in top_bar(client, staff)
    # what the link would have opened: the admin's own "nothing to see" page
    assert "have permission to view or edit anything" in client.get("/admin/").content.decode()


def test_a_staff_user_with_one_model_permission_and_a_superuser_get_the_link(client, staff, admin_user):
    staff.user_permissions.add(Permission.objects.get(codename="view_survey"))
    staff = type(staff).objects.get(pk=staff.pk)  # permissions are cached on the object
    assert ADMIN_LINK in top_bar(client, staff)
    assert ADMIN_LINK in top_bar(client, admin_user)


def test_a_researcher_gets_no_admin_link(client, researcher):
    assert ADMIN_LINK not in top_bar(client, researcher)
