"""Taking submissions: the items an assignment shows, and storing its answers whole or not at all.

Handing out slots is in claims.py. A submission flips the assignment from active to submitted
with a conditional UPDATE (`... WHERE status='active'`) inside the transaction that stores its
ratings: a replay or a double click finds nothing to flip and stores nothing.
"""

import dataclasses
import re
import secrets

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.kinds.base import SubmissionRefused
from annotation.kinds.registry import kind_for
from annotation.models import (
    Aspect,
    Assignment,
    AttentionAnswer,
    HITItem,
    Rating,
    ReviewAction,
    Survey,
    WrittenResponse,
)
from annotation.quality.services import quality_mark_dirty
from annotation.selectors.raw_rows import columns, fetch


@dataclasses.dataclass(frozen=True)
class SubmitResult:
    assignment_id: int
    ratings: int
    written: int
    checks_passed: int
    checks_failed: int
    status: str
    flagged: bool
    replayed: bool = False


def assignment_items(*, assignment, annotator=None, hit_items=None):
    """The items an assignment shows: its HIT's items less overlap responses already rated.

    Computed the same way when the page is rendered and when it is submitted; an annotator holds
    at most one active assignment per survey, so nothing changes in between. `hit_items`: all the
    HIT's items, when the caller has read them already.
    """
    if hit_items is None:
        hit_items = (
            HITItem.objects.filter(hit_id=assignment.hit_id)
            .select_related("context", "response", "response_b", "attention_check")
            .order_by("position")
        )
    return _without_rated_overlap(list(hit_items), assignment, annotator or assignment.annotator)


def _without_rated_overlap(items, assignment, annotator):
    if annotator is None or not any(item.is_overlap for item in items):
        return items
    already = set(
        Rating.objects.filter(survey_id=assignment.hit.survey_id, annotator=annotator)
        .exclude(assignment=assignment)
        .values_list("response_id", flat=True)
    )
    return [item for item in items if not (item.is_overlap and item.response_id in already)]


# An item id is a row id: ASCII digits, at most 18 of them (a 64-bit key). A longer run of digits
# names no item, and int() refuses one of over 4,300 digits (a field name a client made up was a
# server error on the task page, the MTurk frame and the CSRF refusal page); it is ignored as any
# other unknown field is.
ANSWER_KEY = re.compile(r"^(score|seconds|text|telemetry|strength|reason)-([0-9]{1,18})(?:-([\w-]+))?$")


def parse_answers(data):
    """Turn form fields (`score-<item>-<aspect>`, `seconds-<item>`, `text-<item>` with its
    `telemetry-<item>`, and for pairwise items `strength-<item>` and `reason-<item>`) into answers.

    Returns `{item_id: {"scores": {aspect: str}, "seconds": str|None, "text": str|None, ...}}` for
    the submit service, which does all validation; unknown item ids are kept so it can refuse them.
    """
    answers = {}
    for key in data:
        match = ANSWER_KEY.match(key)
        if not match:
            continue
        field, item_id, aspect = match.group(1), int(match.group(2)), match.group(3)
        answer = answers.setdefault(item_id, {"scores": {}, "seconds": None, "text": None})
        if field == "score":
            answer["scores"][aspect or Aspect.OVERALL] = data[key]
        else:
            answer[field] = data[key]
    return answers


def _stored_result(assignment, replayed):
    """The result of an assignment submitted earlier, read back from the database (replays only)."""
    checks = list(assignment.attention_answers.values_list("passed", flat=True))
    return SubmitResult(
        assignment_id=assignment.pk,
        # The kind's answers (a writing survey's model is Rating, of which it stores none).
        ratings=kind_for(assignment.hit.survey).answer_model().objects.filter(assignment=assignment).count(),
        written=assignment.written_responses.count(),
        checks_passed=sum(checks),
        checks_failed=len(checks) - sum(checks),
        status=assignment.status,
        flagged=assignment.flagged,
        replayed=replayed,
    )


def _stored(assignment):
    return Assignment.objects.select_related("hit__survey", "annotator").get(pk=assignment.pk)


def _items_to_check(assignment, annotator):
    """The items the submission must answer: as `assignment_items`, without the texts to show."""
    # Written out (selectors/raw_rows.py): every submission reads them, and the ORM took longer to
    # build this join than the database to run it. As select_related("attention_check") would.
    quote, checks = connection.ops.quote_name, HITItem._meta.get_field("attention_check").related_model
    sql = f"""SELECT {columns("i", HITItem)}, {columns("c", checks)}
        FROM {quote(HITItem._meta.db_table)} i LEFT JOIN {quote(checks._meta.db_table)} c ON c.id = i.attention_check_id
        WHERE i.hit_id = %s ORDER BY i.position"""
    items = []
    for item, check in fetch(sql, [assignment.hit_id], [HITItem, checks]):
        item.attention_check = check
        items.append(item)
    return _without_rated_overlap(items, assignment, annotator)


def _aspects(survey):
    """The survey's aspects (the questions asked of each item), as `survey.aspects` (written out, as above)."""
    table = connection.ops.quote_name(Aspect._meta.db_table)
    sql = f"SELECT {columns('x', Aspect)} FROM {table} x WHERE x.survey_id = %s"
    return [aspect for (aspect,) in fetch(sql, [survey.pk], [Aspect])]


def _validated_rows(assignment, annotator, survey, items, answers):
    aspects = {a.key: a for a in _aspects(survey)}
    by_id = {item.pk: item for item in items}
    unknown = set(answers) - set(by_id)
    if unknown:
        # Not named: the numbers are field names of the client's making, which mean nothing on the page.
        raise SubmissionRefused(
            f"The answers sent name {len(unknown)} item{'s' if len(unknown) != 1 else ''} that this task does "
            "not show: reload the page and answer again."
        )
    missing = kind_for(survey).unanswered(items=items, answers=answers, aspects=aspects)
    if missing:
        # Numbered as the page numbers them: the items shown, in order, from 1.
        numbers = [number for number, item in enumerate(items, start=1) if item.pk in missing]
        raise SubmissionRefused(kind_for(survey).missing_message(numbers), missing=missing)
    return kind_for(survey).validated_rows(
        assignment=assignment, annotator=annotator, survey=survey, items=items, answers=answers, aspects=aspects
    )


def _flip_submitted(assignment, annotator, now, *, flagged):
    """Flip the slot from active to submitted if it is still this annotator's, this token's and in
    time; whether it was. Written out (selectors/raw_rows.py): the ORM built it slower than it ran."""
    quote, at = connection.ops.quote_name, connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""UPDATE {quote(Assignment._meta.db_table)} SET status = %s, submitted_at = %s, flagged = %s
            WHERE id = %s AND status = %s AND annotator_id = %s AND token = %s
            AND (expires_at IS NULL OR expires_at > %s)""",
            [str(Assignment.Status.SUBMITTED), at, flagged, assignment.pk, str(Assignment.Status.ACTIVE),
             annotator.pk, assignment.token, at],
        )  # fmt: skip
        return cursor.rowcount == 1


class _NotYours(Exception):
    """The conditional flip found the slot no longer active for this annotator and token."""


def assignment_submit(*, assignment, answers, annotator=None, token=None, now=None):
    """Store one assignment's answers: everything in one transaction, or nothing.

    `answers`: `{item_id: {"scores": {aspect: score}, "seconds": float, "text": str}}` (see
    `parse_answers`). `annotator`/`token`, when given, must match the assignment. A replay of an
    already submitted assignment changes nothing and returns its stored result. Refusals raise
    SubmissionRefused and store nothing.

    The caller's `assignment` (with `hit__survey` and `annotator`, as the page just read it) is
    not read again: what decides is the conditional UPDATE that flips it from active to submitted
    for this annotator, this token and before the deadline, inside the transaction that stores the
    answers. Only when that finds nothing to flip is the stored row read, to say why.
    """
    now = now or timezone.now()
    if assignment.status != Assignment.Status.ACTIVE:
        # A replay, or a slot that is no longer theirs: decide on the stored row, not the caller's copy.
        assignment = _stored(assignment)
    if token is not None and not secrets.compare_digest(str(token), assignment.token):
        raise SubmissionRefused("This link does not belong to this assignment.")
    if annotator is not None and assignment.annotator_id != annotator.pk:
        raise SubmissionRefused("This assignment belongs to another annotator.")
    if assignment.status in Assignment.FINISHED:
        return _stored_result(assignment, replayed=True)
    if assignment.status != Assignment.Status.ACTIVE or assignment.annotator_id is None:
        raise SubmissionRefused("This assignment is no longer yours: it expired and was given to someone else.")
    if assignment.expires_at and assignment.expires_at <= now:
        raise SubmissionRefused("This assignment expired before it was submitted; nothing was stored.")
    survey = assignment.hit.survey
    annotator = assignment.annotator
    answers = {int(k): v for k, v in answers.items()}
    items = _items_to_check(assignment, annotator)
    ratings, checks, written = _validated_rows(assignment, annotator, survey, items, answers)
    kind = kind_for(survey)
    failed = kind.failed_checks(checks, items)

    try:
        with transaction.atomic():
            if not _flip_submitted(assignment, annotator, now, flagged=failed > 0):
                raise _NotYours
            # Any IntegrityError here (a response this annotator already rated) rolls all of it back.
            # "ratings": the kind's answers (a pairwise survey's are its judgements).
            kind.store_answers(ratings)
            AttentionAnswer.objects.bulk_create(checks)
            WrittenResponse.objects.bulk_create(written)
            status = Assignment.Status.SUBMITTED
            if failed:
                status = _apply_attention_policy(assignment, survey, failed)
    except IntegrityError:
        raise SubmissionRefused("Some of these responses were already rated by you; nothing was stored.") from None
    except _NotYours:
        # A concurrent request (double click) may have submitted it first; that one stored the answers.
        stored = _stored(assignment)
        if (
            stored.status in Assignment.FINISHED
            and stored.annotator_id == annotator.pk
            and stored.token == assignment.token
        ):
            return _stored_result(stored, replayed=True)
        if stored.status == Assignment.Status.ACTIVE and stored.annotator_id == annotator.pk and stored.expires_at:
            raise SubmissionRefused("This assignment expired before it was submitted; nothing was stored.") from None
        raise SubmissionRefused("This assignment is no longer yours; nothing was stored.") from None
    assignment.status, assignment.submitted_at, assignment.flagged = status, now, failed > 0
    # Agreement and exclusions are recomputed by a debounced task, never in this request.
    quality_mark_dirty(survey=survey)
    return SubmitResult(
        assignment_id=assignment.pk,
        ratings=len(ratings),
        written=len(written),
        checks_passed=len(checks) - failed,
        checks_failed=failed,
        status=status,
        flagged=failed > 0,
    )


def _apply_attention_policy(assignment, survey, failed):
    """Record the flag and apply the survey's policy; returns the assignment's status after it."""
    reason = f"Failed {failed} attention check(s)."
    policy = survey.attention_policy
    ReviewAction.objects.create(
        survey=survey, annotator=assignment.annotator, assignment=assignment, action="flag", reason=reason
    )
    if policy == Survey.AttentionPolicy.EXCLUDE:
        ReviewAction.objects.create(
            survey=survey, annotator=assignment.annotator, assignment=assignment, action="exclude", reason=reason
        )
    elif policy == Survey.AttentionPolicy.REJECT and survey.provider != Survey.Provider.MTURK:
        # On MTurk a rejection waits until sync confirms the assignment (mturk_apply_attention_policy):
        # at submit time MTurk has not yet received the work, so there is nothing to reject there.
        # Nor is anything sent to a platform here: a link platform's participant and a Prolific
        # session are not confirmed yet when they submit (their providers refuse to reject, and
        # Prolific wants a 100-character message), and such a refusal raised after the commit
        # showed the participant a server error for work that was stored. Prolific is told by the
        # FAILED_ATTENTION_CHECK completion code; the researcher decides on the platforms' pages.
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.REJECTED)
        ReviewAction.objects.create(
            survey=survey, annotator=assignment.annotator, assignment=assignment, action="reject", reason=reason
        )
        return Assignment.Status.REJECTED
    return Assignment.Status.SUBMITTED
