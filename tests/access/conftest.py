"""Users of the access tests beside tests/conftest.py's researchers: staff without permissions, and a
user who holds only the explicit right to manage any study."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from tests.conftest import PASSWORD


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("staffer", password=PASSWORD, is_staff=True)


@pytest.fixture
def manager(db):
    """Not staff, not superuser: holds only the explicit permission."""
    user = get_user_model().objects.create_user("manager", password=PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="manage_any_study", content_type__app_label="annotation"))
    return user
