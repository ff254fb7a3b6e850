"""The claim's hand-written "HITs that would repeat a check" statement (PostgreSQL) picks exactly the
HITs the ORM's `_repeating_items` names, on gold and instructed checks and whole conversations."""

import pytest
from django.db import connection

from annotation import services
from annotation.models import Assignment
from annotation.services.claims import _repeating_items, repeating_hit_ids
from tests.annotation.conversation_study_helpers import conversation_answers, make_conversation_survey
from tests.annotation.studies_helpers import good_answers, make_survey

pytestmark = pytest.mark.django_db

GOLDS = [
    {"turns": [f"is ice hot {n}?"], "response_text": f"Yes, ice is boiling hot {n}.", "accepted_scores": [1, 2]}
    for n in (1, 2)
]


@pytest.fixture(autouse=True)
def _needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("the statement is PostgreSQL's (DATABASE_URL=postgres://...)")


def _both_ways(survey, worker_ids):
    """For each annotator: (the statement's HIT ids, the ORM's), after they hold or did some HITs."""
    answers = []
    for worker_id in worker_ids:
        own = list(Assignment.objects.filter(hit__survey=survey, annotator__worker_id=worker_id).select_related("hit"))
        assert own, worker_id
        orm = set(_repeating_items(survey, own).order_by().values_list("hit_id", flat=True).distinct())
        answers.append((set(repeating_hit_ids(survey, own)), orm))
    return answers


def _work(survey, worker_ids, tasks, answer):
    for _ in range(tasks):
        for worker_id in worker_ids:
            assignment = services.assignment_claim(survey=survey, worker_id=worker_id)
            services.assignment_submit(assignment=assignment, answers=answer(assignment))


@pytest.mark.parametrize("checks", ["gold", "instructed"])
def test_rating_surveys_with_checks(researcher, checks):
    golds = {"gold_checks": GOLDS} if checks == "gold" else {}
    survey = make_survey(
        researcher, n_contexts=30, attention_checks_per_hit=1, assignments_per_hit=2, name=checks, **golds
    )
    workers = ["w1", "w2", "w3"]
    _work(survey, workers, 2, good_answers)
    services.assignment_claim(survey=survey, worker_id="w1")  # one held, not submitted, too

    answers = _both_ways(survey, workers)

    assert all(sql == orm for sql, orm in answers), answers
    assert any(orm for _, orm in answers), "the layout gives the statement something to find"


def test_conversation_surveys(researcher):
    survey = make_conversation_survey(researcher, n=8, contexts_per_hit=1, assignments_per_hit=2)
    workers = ["w1", "w2"]
    _work(survey, workers, 2, conversation_answers)

    answers = _both_ways(survey, workers)

    assert all(sql == orm for sql, orm in answers), answers
    assert any(orm for _, orm in answers), "the layout gives the statement something to find"
