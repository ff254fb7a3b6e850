"""A conversation submission's ratings go in as plain rows (one INSERT from arrays on PostgreSQL,
bulk_create elsewhere): what is read back is what was given, and a row that breaks a unique
constraint undoes the whole submission."""

import pytest
from django.db import IntegrityError, transaction

from annotation import services
from annotation.kinds.conversation.storing import RatingRow, ratings_insert
from annotation.models import ConversationRating, ConversationTurn, HITItem
from tests.annotation.conversation_study_helpers import claimed, conversation_answers, make_conversation_survey

pytestmark = pytest.mark.django_db(transaction=True)


def test_rows_read_back_as_given_with_nulls_and_a_creation_time(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    conversation = survey.dataset.conversations.order_by("position").first()
    turn = ConversationTurn.objects.filter(conversation=conversation, speaker="system").first()
    rows = [
        RatingRow(survey.pk, assignment.annotator_id, assignment.pk, conversation.pk, None, "overall", 4, 12.5),
        RatingRow(survey.pk, assignment.annotator_id, assignment.pk, conversation.pk, turn.pk, "repetitive", 0, None),
    ]
    with transaction.atomic():
        ratings_insert(rows)
    stored = ConversationRating.objects.filter(survey=survey).order_by("turn_id")
    fields = ("survey_id", "annotator_id", "assignment_id", "conversation_id", "turn_id", "aspect", "score", "seconds")
    assert sorted(stored.values_list(*fields), key=str) == sorted(rows, key=str)
    assert all(row.created_at is not None for row in stored)


def test_a_row_already_stored_undoes_the_whole_submission(researcher):
    survey = make_conversation_survey(researcher)
    assignment = claimed(survey)
    real = next(i for i in services.assignment_items(assignment=assignment) if i.kind == HITItem.Kind.CONVERSATION)
    # the same worker's rating of a conversation of this HIT, stored before the submission
    ConversationRating.objects.create(
        survey=survey, annotator=assignment.annotator, conversation_id=real.conversation_id, aspect="overall", score=1
    )
    with pytest.raises(services.SubmissionRefused, match="already rated"):
        services.assignment_submit(assignment=assignment, answers=conversation_answers(assignment))
    assert ConversationRating.objects.filter(survey=survey).count() == 1
    assignment.refresh_from_db()
    assert assignment.status == assignment.Status.ACTIVE
    with pytest.raises(IntegrityError), transaction.atomic():
        ratings_insert([RatingRow(survey.pk, assignment.annotator_id, assignment.pk, real.conversation_id, None,
                                  "overall", 2, None)])  # fmt: skip
