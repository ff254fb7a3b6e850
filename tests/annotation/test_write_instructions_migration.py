"""Migration 0016: writing surveys still holding the rating instructions get the writing ones;
instructions a researcher wrote, and other task types, are left as they are."""

import pytest

from annotation.kinds.writing.kind import WRITE_INSTRUCTIONS
from annotation.services.surveys import instructions_by_type
from tests.scoring.test_owner_migration import _latest, _migrate

BEFORE = [("annotation", "0015_admin_names")]
AFTER = [("annotation", "0016_write_survey_instructions")]


@pytest.mark.django_db(transaction=True)
def test_writing_surveys_with_the_rating_default_get_the_writing_instructions():
    old = _migrate(BEFORE)
    User = old.get_model("auth", "User")
    Dataset = old.get_model("annotation", "Dataset")
    Survey = old.get_model("annotation", "Survey")
    owner = User.objects.create(username="alice")
    dataset = Dataset.objects.create(name="study", owner=owner)
    rating = instructions_by_type()["rate"]
    for name, task_type, text in (
        ("write-default", "write", rating),
        ("write-own", "write", "Reply kindly."),
        ("rate-default", "rate", rating),
    ):
        Survey.objects.create(dataset=dataset, owner=owner, name=name, task_type=task_type, instructions=text)
    new = _migrate(AFTER)
    texts = dict(new.get_model("annotation", "Survey").objects.values_list("name", "instructions"))
    assert texts == {"write-default": WRITE_INSTRUCTIONS, "write-own": "Reply kindly.", "rate-default": rating}
    _migrate(_latest())
