"""Rejected slots reopened at the same instant (a page, a sync and a webhook at once) on PostgreSQL."""

import time

import pytest
from django.db import connection
from django.db.models import QuerySet

from annotation.models import Annotator, Assignment
from annotation.services.slots import rejected_slots_reopen
from tests.annotation.prolific_helpers import make_prolific_survey
from tests.annotation.test_payment_concurrency import at_once

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL (DATABASE_URL=postgres://...)")


def test_rejections_on_one_hit_at_once_open_one_slot_each_with_distinct_numbers(researcher, monkeypatch):
    survey = make_prolific_survey(researcher, n_hits=1, assignments=2)
    hit = survey.hits.get()
    people = [Annotator.objects.create(provider="prolific", worker_id=f"5f{n:022d}") for n in (1, 2)]
    for slot, person in enumerate(people):
        Assignment.objects.filter(hit=hit, slot=slot).update(annotator=person, status=Assignment.Status.REJECTED)

    read_last_slot = QuerySet.aggregate

    def slow_read(self, *args, **kwargs):
        result = read_last_slot(self, *args, **kwargs)
        time.sleep(0.2)  # every thread has read the HIT's last slot number before any writes its own
        return result

    monkeypatch.setattr(QuerySet, "aggregate", slow_read)
    # each person's rejection recorded twice at once (the review page and a webhook), both at once
    outcomes = at_once(
        *[lambda person=person: rejected_slots_reopen(survey=survey, annotator=person) for person in people * 2]
    )

    assert not [o for o in outcomes if isinstance(o, Exception)], outcomes
    assert sorted(outcomes) == [0, 0, 1, 1]
    assert sorted(hit.assignments.values_list("slot", flat=True)) == [0, 1, 2, 3]
    assert hit.assignments.filter(status=Assignment.Status.OPEN).count() == 2
    assert hit.assignments.filter(replaced=True).count() == 2
