"""The annotator path's hand-written reads (selectors/raw_rows.py) give the instances the ORM gives.

Each written-out read is compared, field by field, with the ORM query it replaced, on whichever
database the suite runs (SQLite hands datetimes back as text and both hand JSON back as text: the
converters must have run for the values to be equal).
"""

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from annotation import services
from annotation.crowd.blocks import block_for_owner
from annotation.models import HIT, Annotator, Assignment, HITItem, HITPage, Survey
from annotation.selectors import assignment_for_page
from annotation.selectors.raw_rows import RowReader, columns, fetch
from annotation.services.assignments import _aspects, _items_to_check
from annotation.services.claims import _annotator_row_locked, _own_assignments
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db


def _fields(instance):
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def _held(survey, worker="w1"):
    assignment = services.assignment_claim(survey=survey, worker_id=worker)
    return Assignment.objects.select_related("hit__survey", "annotator").get(pk=assignment.pk)


def test_the_task_behind_a_link_reads_as_the_orm_reads_it(researcher):
    survey = make_survey(researcher, attention_checks_per_hit=1)
    held = _held(survey)
    services.assignment_submit(assignment=held, answers=good_answers(held))
    second = _held(survey)

    page = assignment_for_page(token=second.token)
    assert _fields(page) == _fields(second)
    assert _fields(page.hit) == _fields(second.hit)
    assert _fields(page.hit.survey) == _fields(second.hit.survey)
    assert _fields(page.annotator) == _fields(second.annotator)
    assert isinstance(page.assigned_at, datetime.datetime) and timezone.is_aware(page.assigned_at)
    assert isinstance(page.hit.survey.launched_at, datetime.datetime)
    # Counted by hand: one HIT finished, and the survey's HITs.
    assert (page.hits_done, page.survey_hits) == (1, HIT.objects.filter(survey=survey).count())
    assert assignment_for_page(token="no-such-token") is None
    # An open slot (no annotator yet): the outer join gives None, as select_related does.
    open_slot = Assignment.objects.filter(hit__survey=survey, status="open").first()
    assert assignment_for_page(token=open_slot.token, progress=False).annotator is None


def test_the_annotator_row_carries_blocks_of_the_owner_or_everyone_only(researcher, django_user_model):
    survey = make_survey(researcher)
    _held(survey, "w1")
    other = django_user_model.objects.create_user("other-researcher")
    annotator = Annotator.objects.get(worker_id="w1")

    assert _annotator_row_locked(worker_id="w1", provider="local", owner_id=researcher.pk).blocked is False
    block_for_owner(annotator=annotator, owner=other, reason="theirs")
    assert _annotator_row_locked(worker_id="w1", provider="local", owner_id=researcher.pk).blocked is False
    assert _annotator_row_locked(worker_id="w1", provider="local", owner_id=other.pk).blocked is True
    block_for_owner(annotator=annotator, owner=None, reason="everyone")
    row = _annotator_row_locked(worker_id="w1", provider="local", owner_id=researcher.pk)
    assert row.blocked is True and _fields(row) == _fields(annotator)
    assert _annotator_row_locked(worker_id="nobody", provider="local", owner_id=None) is None


def test_assignments_items_and_aspects_read_as_the_orm_reads_them(researcher):
    gold = [{"turns": ["Is the sky green?"], "response_text": "No, it is blue.", "accepted_scores": [4, 5]}]
    survey = make_survey(researcher, attention_checks_per_hit=1, aspects=["fluency"], gold_checks=gold)
    held = _held(survey)
    services.assignment_submit(assignment=held, answers=good_answers(held))
    current = _held(survey)

    own = _own_assignments(survey, current.annotator)
    expected = Assignment.objects.filter(hit__survey=survey, annotator=current.annotator).select_related("hit")
    expected = [(_fields(a), _fields(a.hit)) for a in expected.order_by("pk")]
    assert [(_fields(a), _fields(a.hit)) for a in own] == expected

    items = _items_to_check(current, current.annotator)
    orm = HITItem.objects.filter(hit_id=current.hit_id).select_related("attention_check").order_by("position")
    assert [_fields(i) for i in items] == [_fields(i) for i in orm]
    checks = [(i.attention_check and _fields(i.attention_check)) for i in items]
    assert checks == [(i.attention_check and _fields(i.attention_check)) for i in orm]
    assert any(checks) and None in checks  # both sides of the outer join were read

    assert sorted(map(_fields, _aspects(survey)), key=lambda a: a["id"]) == sorted(
        map(_fields, survey.aspects.all()), key=lambda a: a["id"]
    )


def test_a_row_that_does_not_match_its_models_is_refused(researcher):
    survey = make_survey(researcher)
    quote = connection.ops.quote_name
    sql = f"SELECT {columns('s', Survey)} FROM {quote(Survey._meta.db_table)} s WHERE s.id = %s"
    (row,) = fetch(sql, [survey.pk], [Survey])
    assert _fields(row[0]) == _fields(Survey.objects.get(pk=survey.pk))
    with pytest.raises(ValueError, match="shorter"):
        RowReader([Survey, HITPage]).read((1, 2, 3))
