"""Handing out assignment slots, taking submissions, and returning abandoned slots to the pool.

Concurrency: a slot is taken by a conditional UPDATE (`... WHERE status='open'`) whose row count
says who won, so two annotators can never hold the same slot, on any database. On PostgreSQL the
candidate is first picked with `SELECT ... FOR UPDATE SKIP LOCKED`, so 50 simultaneous claims
spread over different rows instead of queueing on one. A submission flips the assignment from
active to submitted with the same kind of conditional UPDATE inside the transaction that stores
its ratings: a replay or a double click finds nothing to flip and stores nothing.
"""

import dataclasses
import datetime
import re
import secrets
import time

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.answer_seconds import seconds_or_none
from annotation.crowd.blocks import blocks_applying_to
from annotation.models import (
    HIT,
    Annotator,
    Aspect,
    Assignment,
    AttentionAnswer,
    HITItem,
    HITPage,
    PairwiseJudgement,
    Rating,
    ReviewAction,
    Survey,
    WrittenResponse,
)
from annotation.quality.services import quality_mark_dirty
from annotation.services.pairwise_answers import PairAnswerError, failed_checks, pairwise_rows
from annotation.slots import assignments_expire

WORKER_ID_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,64}$")
MAX_WRITTEN_CHARS = 2000
NO_MORE_WORK = "There is no more work available for you in this study right now. Thank you!"


class NoWorkAvailable(Exception):
    """No slot can be handed to this annotator now; the message says why (safe to show them)."""


class SubmissionRefused(Exception):
    """A submission was refused and nothing was stored; the message is safe to show the annotator.

    `missing`: the ids of the items left unanswered, for the page to mark next to each item.
    """

    def __init__(self, message, missing=()):
        super().__init__(message)
        self.missing = tuple(missing)


def _numbers_text(numbers):
    """[3] -> "3"; [3, 7] -> "3 and 7"; [2, 3, 7] -> "2, 3 and 7"."""
    shown = [str(n) for n in numbers]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def missing_message(numbers, *, pairwise=False):
    """The summary of a submission with items left out, naming them by the numbers the page shows.

    A pairwise page's items are pairs (each of reply A and reply B; "pair 5" in its item message).
    """
    one, many = ("pair", "pairs") if pairwise else ("reply", "replies")
    if len(numbers) == 1:
        return f"Please answer every item: {one} {numbers[0]} is still unanswered (marked below)."
    return f"Please answer every item: {many} {_numbers_text(numbers)} are still unanswered (marked below)."


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


def worker_id_valid(worker_id):
    return bool(worker_id) and bool(WORKER_ID_RE.match(worker_id))


def annotator_get(*, worker_id, provider):
    if not worker_id_valid(worker_id):
        raise NoWorkAvailable("That identifier is not valid: use 1-64 letters, digits or . _ - @ :")
    try:
        return Annotator.objects.get_or_create(provider=provider, worker_id=worker_id)[0]
    except IntegrityError:
        # Two first requests of the same new worker raced; the other one created the row.
        return Annotator.objects.get(provider=provider, worker_id=worker_id)


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


def _annotator_locked(*, worker_id, provider, owner_id):
    """The annotator's row, locked until the transaction ends, and whether this call created it.

    Annotated with `blocked` (a block of the survey's owner, or of everyone, exists), so one query
    answers both. The lock
    serialises one worker's tabs: two simultaneous requests of the same person must not take two
    HITs. The insert comes first and ignores a conflict: a new worker (every claim in a burst of
    first visits) is then one statement, with no assignments to read; two first visits of the same
    worker need no savepoint; and on SQLite, which has no row locks but one writer at a time,
    writing first takes the database's write lock for this transaction, so what we read next is
    current and stays so.
    """
    created = _annotator_insert(worker_id=worker_id, provider=provider)
    if created is not None:
        # Nobody can have blocked a row that no other transaction can see yet.
        created.blocked = False
        return created, True
    blocks = blocks_applying_to(owner_id).filter(annotator=OuterRef("pk"))
    rows = Annotator.objects.filter(provider=provider, worker_id=worker_id).annotate(blocked=Exists(blocks)).order_by()
    if connection.features.has_select_for_update:
        rows = rows.select_for_update(of=("self",))
    return rows.first(), False


def _annotator_insert(*, worker_id, provider):
    """INSERT ... ON CONFLICT DO NOTHING RETURNING id: the new row, or None if the worker exists.

    Written out because the ORM's `bulk_create(ignore_conflicts=True)` cannot say whether it
    inserted; both PostgreSQL and SQLite (3.35+) run this statement as it stands.
    """
    meta, quote, created_at = Annotator._meta, connection.ops.quote_name, timezone.now()
    columns = ", ".join(quote(meta.get_field(name).column) for name in ("provider", "worker_id", "created_at"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES (%s, %s, %s) "
            f"ON CONFLICT DO NOTHING RETURNING {quote(meta.pk.column)}",
            [provider, worker_id, connection.ops.adapt_datetimefield_value(created_at)],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return Annotator(pk=row[0], provider=provider, worker_id=worker_id, created_at=created_at)


def _candidates(survey, own, pinned):
    """Open slots this annotator may take, first HIT first (not yet locked or taken).

    Leaving out the HITs they hold or did is all it takes for "never a response twice": a regular
    context, with all its responses, sits on exactly one HIT of a survey (`hits_generate`), and
    overlap responses they rated are left off their page (`assignment_items`). The database's
    unique (survey, annotator, response, aspect) constraint backs this: a second rating is refused.
    """
    return (
        Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.OPEN, **pinned)
        .exclude(hit_id__in=[a.hit_id for a in own])
        .select_related("hit")
        .order_by("hit__position", "slot")
    )


def _mark_taken(assignment, survey, annotator, now, minutes):
    assignment.status = Assignment.Status.ACTIVE
    assignment.annotator = annotator
    assignment.assigned_at = now
    assignment.expires_at = now + datetime.timedelta(minutes=minutes)
    assignment.hit.survey = survey
    return assignment


def _take(candidates, survey, annotator, now):
    """Flip the first candidate that is still open to active for `annotator`; None if none was."""
    minutes = survey.assignment_minutes
    for candidate in candidates:
        taken = Assignment.objects.filter(pk=candidate.pk, status=Assignment.Status.OPEN).update(
            status=Assignment.Status.ACTIVE,
            annotator=annotator,
            assigned_at=now,
            expires_at=now + datetime.timedelta(minutes=minutes),
        )
        if taken:
            return _mark_taken(candidate, survey, annotator, now, minutes)
    return None


def _take_next_skip_locked(survey, annotator, now, own, hit):
    """PostgreSQL: take the first open slot no other claim holds, in one statement; None if none.

    The same choice as `_candidates` then `_take` (first HIT first; HITs the annotator holds or
    did left out; rows other claimers hold skipped, not waited for), written out as one
    `UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED)` that also returns the HIT and its
    stored page (as `select_related` would: `hit.page`, None if it has none): one round trip
    instead of three, and none of the ORM's query building on the busiest path of the app. The
    slot locked in the subquery is still open when the UPDATE flips it.
    """
    quote = connection.ops.quote_name
    slots, hits, pages = (quote(model._meta.db_table) for model in (Assignment, HIT, HITPage))
    slot_fields, hit_fields, page_fields = (model._meta.concrete_fields for model in (Assignment, HIT, HITPage))
    only_hit = "AND a.hit_id = %s" if hit is not None else ""
    taken = ", ".join(f"t.{quote(f.column)}" for f in slot_fields)
    hit_columns = ", ".join(f"h.{quote(f.column)}" for f in hit_fields)
    page_columns = ", ".join(f"p.{quote(f.column)}" for f in page_fields)
    expires = now + datetime.timedelta(minutes=survey.assignment_minutes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH t AS (
                UPDATE {slots} SET status = %s, annotator_id = %s, assigned_at = %s, expires_at = %s
                WHERE id = (
                    SELECT a.id FROM {slots} a JOIN {hits} h ON h.id = a.hit_id
                    WHERE h.survey_id = %s AND a.status = %s {only_hit} AND NOT (a.hit_id = ANY(%s))
                    ORDER BY h.position, a.slot LIMIT 1 FOR UPDATE OF a SKIP LOCKED
                ) AND status = %s
                RETURNING *
            )
            SELECT {taken}, {hit_columns}, {page_columns}
            FROM t JOIN {hits} h ON h.id = t.hit_id LEFT JOIN {pages} p ON p.hit_id = h.id""",
            [
                Assignment.Status.ACTIVE,
                annotator.pk,
                now,
                expires,
                survey.pk,
                Assignment.Status.OPEN,
                *([hit.pk] if hit is not None else []),
                [a.hit_id for a in own],
                Assignment.Status.OPEN,
            ],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    db, n_slot, n_hit = connection.alias, len(slot_fields), len(hit_fields)
    assignment = Assignment.from_db(db, [f.attname for f in slot_fields], row[:n_slot])
    assignment.hit = HIT.from_db(db, [f.attname for f in hit_fields], row[n_slot : n_slot + n_hit])
    page = row[n_slot + n_hit :]
    # Filled in as select_related would fill a reverse one-to-one: `hit.page` then reads no row.
    stored = None if page[0] is None else HITPage.from_db(db, [f.attname for f in page_fields], page)
    HIT._meta.get_field("page").set_cached_value(assignment.hit, stored)
    assignment.hit.survey, assignment.annotator = survey, annotator
    return assignment


def _claim_once(survey, worker_id, provider, hit, now):
    """One attempt at a claim, in one transaction: the held HIT, a newly taken slot, or None.

    On PostgreSQL the candidates are read with `FOR UPDATE SKIP LOCKED`: rows other claimers hold
    are skipped, not waited for, so simultaneous claims spread over different slots, and the slot
    we lock is still open when we flip it. Elsewhere (SQLite) the conditional UPDATE alone decides.
    """
    annotator, created = _annotator_locked(worker_id=worker_id, provider=provider, owner_id=survey.owner_id)
    if annotator.blocked:
        raise NoWorkAvailable("There is no more work for you in this study. Thank you.")
    own = []
    if not created:
        # Read under the annotator's lock, so another tab of theirs cannot take a slot meanwhile
        # (a row created by this transaction has no assignments: no one else can see it yet).
        # Ordered by id: the models' default order would join the survey just to sort by its date.
        own = list(
            Assignment.objects.filter(hit__survey=survey, annotator=annotator).select_related("hit").order_by("pk")
        )
    # How many HITs of the survey they finished: the page shows "Task n of at most m" from it.
    hits_done = sum(a.status in Assignment.FINISHED for a in own)
    if any(a.status == Assignment.Status.ACTIVE and a.expires_at and a.expires_at <= now for a in own):
        # Their own abandoned HIT goes back to the pool now rather than at the next sweep.
        assignments_expire(now=now, survey=survey, annotator=annotator)
        own = [a for a in own if not (a.status == Assignment.Status.ACTIVE and a.expires_at and a.expires_at <= now)]
    for assignment in own:
        if assignment.status == Assignment.Status.ACTIVE and (hit is None or assignment.hit_id == hit.pk):
            assignment.hit.survey, assignment.annotator = survey, annotator
            assignment.hits_done = hits_done
            # Nothing else of theirs in the survey: no rating of theirs can drop an overlap item.
            assignment.first_in_survey = len(own) == 1
            return assignment
    if survey.status != Survey.Status.LIVE:
        raise NoWorkAvailable("This study is not accepting work right now.")
    if len(own) >= survey.max_hits_per_annotator:
        raise NoWorkAvailable(
            f"You have completed the maximum of {survey.max_hits_per_annotator} tasks in this study. Thank you!"
        )
    # With `hit`, other HITs the annotator holds do not count (MTurk workers may hold several).
    pinned = {"hit": hit} if hit is not None else {}
    if connection.vendor == "postgresql":
        assignment = _take_next_skip_locked(survey, annotator, now, own, hit)
    else:
        assignment = _take(list(_candidates(survey, own, pinned)[:20]), survey, annotator, now)
    if assignment is None and not _candidates(survey, own, pinned).exists():
        raise NoWorkAvailable(NO_MORE_WORK)
    if assignment is not None:
        assignment.hits_done = hits_done
        assignment.first_in_survey = not own
    return assignment


def assignment_claim(*, survey, worker_id, provider=Survey.Provider.LOCAL, hit=None, now=None, survey_is_current=False):
    """The annotator's current assignment in `survey`, or the next free slot for them.

    Never a HIT they already worked on, never a response they already rated, at most
    `max_hits_per_annotator` HITs. `hit` restricts the slot to one HIT (a crowd such as MTurk
    picks the HIT itself). Raises NoWorkAvailable with the reason otherwise. The assignment
    returned carries `hit.survey`, `annotator`, `hits_done` (HITs of the survey they finished)
    and `first_in_survey` (they hold nothing else in it, so no overlap item drops off their
    page), all a HIT page needs.

    `survey_is_current`: the caller read `survey` from the database in this same request (the
    annotator's link does), so it is as fresh as a second read here would be.
    """
    now = now or timezone.now()
    if not worker_id_valid(worker_id):
        raise NoWorkAvailable("That identifier is not valid: use 1-64 letters, digits or . _ - @ :")
    if not survey_is_current:
        # The caller's object may be stale: the status (paused, closed) must be read now.
        survey = Survey.objects.get(pk=survey.pk)
    # A paused survey still lets annotators resume the HIT they hold; it hands out nothing new.
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        raise NoWorkAvailable("This study is not accepting work right now.")
    for attempt in range(5):
        refusal = None
        try:
            with transaction.atomic():
                try:
                    assignment = _claim_once(survey, worker_id, provider, hit, now)
                except NoWorkAvailable as error:
                    # Commit what was done on the way (a new annotator's row, their abandoned HIT
                    # returned to the pool), then refuse.
                    refusal = error
        except IntegrityError:
            # Only a race this code does not foresee gets here (the annotator's row lock rules out
            # a second slot on one HIT); the transaction rolled back, so simply try again.
            assignment = None
        if refusal is not None:
            raise refusal
        if assignment is not None:
            return assignment
        # Every free slot was locked by other claimers at that instant; they may yet roll back.
        time.sleep(0.02 * (attempt + 1))
    raise NoWorkAvailable(NO_MORE_WORK)


def parse_answers(data):
    """Turn form fields (`score-<item>-<aspect>`, `seconds-<item>`, `text-<item>`, and for pairwise
    items `strength-<item>` and `reason-<item>`) into answers.

    Returns `{item_id: {"scores": {aspect: str}, "seconds": str|None, "text": str|None, ...}}` for
    the submit service, which does all validation; unknown item ids are kept so it can refuse them.
    """
    answers = {}
    for key in data:
        match = re.match(r"^(score|seconds|text|strength|reason)-(\d+)(?:-([\w-]+))?$", key)
        if not match:
            continue
        field, item_id, aspect = match.group(1), int(match.group(2)), match.group(3)
        answer = answers.setdefault(item_id, {"scores": {}, "seconds": None, "text": None})
        if field == "score":
            answer["scores"][aspect or Aspect.OVERALL] = data[key]
        else:
            answer[field] = data[key]
    return answers


def _int_score(value, aspect, item_id):
    try:
        score = int(str(value).strip())
    except (TypeError, ValueError):
        raise SubmissionRefused(f"Item {item_id}: {value!r} is not a score.") from None
    if not aspect.scale_min <= score <= aspect.scale_max:
        raise SubmissionRefused(f"Item {item_id}: {score} is outside the scale {aspect.scale_min}-{aspect.scale_max}.")
    return score


def _stored_result(assignment, replayed):
    """The result of an assignment submitted earlier, read back from the database (replays only)."""
    checks = list(assignment.attention_answers.values_list("passed", flat=True))
    return SubmitResult(
        assignment_id=assignment.pk,
        ratings=assignment.ratings.count() + assignment.pairwise_judgements.count(),
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
    # Ordered by position alone: the default order joins the HIT and its survey to sort one HIT's items.
    items = HITItem.objects.filter(hit_id=assignment.hit_id).select_related("attention_check").order_by("position")
    return _without_rated_overlap(list(items), assignment, annotator)


def _unanswered(items, answers, aspects):
    """Ids of the items with no answer, an empty written reply, or a scale left out."""
    missing = []
    for item in items:
        answer = answers.get(item.pk)
        if answer is None:
            missing.append(item.pk)
        elif item.kind == HITItem.Kind.WRITE:
            if not (answer.get("text") or "").strip():
                missing.append(item.pk)
        else:
            # Every question is asked of every item but an instructed check (see task_items).
            wanted = {Aspect.OVERALL} if item.kind == HITItem.Kind.INSTRUCTED else set(aspects)
            given = {key for key, value in (answer.get("scores") or {}).items() if str(value).strip()}
            if not wanted <= given:
                missing.append(item.pk)
    return missing


def _validated_rows(assignment, annotator, survey, items, answers):
    aspects = {a.key: a for a in survey.aspects.order_by()}  # no default order: it joins the survey
    overall = aspects[Aspect.OVERALL]
    by_id = {item.pk: item for item in items}
    unknown = sorted(set(answers) - set(by_id))
    if unknown:
        raise SubmissionRefused(f"Unknown item(s) {', '.join(map(str, unknown))}: they are not on this task.")
    missing = _unanswered(items, answers, aspects)
    if missing:
        # Numbered as the page numbers them: the items shown, in order, from 1.
        numbers = [number for number, item in enumerate(items, start=1) if item.pk in missing]
        pairwise = survey.task_type == Survey.TaskType.PAIRWISE
        raise SubmissionRefused(missing_message(numbers, pairwise=pairwise), missing=missing)
    if survey.task_type == Survey.TaskType.PAIRWISE:
        try:
            judgements, checks = pairwise_rows(
                assignment=assignment,
                annotator=annotator,
                survey=survey,
                items=items,
                answers=answers,
                aspects=aspects,
                seconds_of=seconds_or_none,
            )
        except PairAnswerError as error:
            raise SubmissionRefused(str(error)) from None
        return judgements, checks, []

    ratings, checks, written = [], [], []
    for item_id, item in by_id.items():
        answer = answers[item_id]
        seconds = seconds_or_none(answer.get("seconds"))
        scores = answer.get("scores") or {}
        if item.kind == HITItem.Kind.WRITE:
            text = (answer.get("text") or "").strip()
            if not text:
                raise SubmissionRefused("Please write a reply for every conversation.")
            if len(text) > MAX_WRITTEN_CHARS:
                raise SubmissionRefused(f"A reply may have at most {MAX_WRITTEN_CHARS} characters.")
            written.append(
                WrittenResponse(
                    assignment=assignment, item=item, context_id=item.context_id, text=text, seconds=seconds
                )
            )
            continue
        wanted = {Aspect.OVERALL: overall} if item.kind == HITItem.Kind.INSTRUCTED else aspects
        extra = sorted(set(scores) - set(wanted))
        if extra:
            raise SubmissionRefused(f"Item {item_id}: unknown scale(s) {', '.join(extra)}.")
        if set(scores) != set(wanted):
            raise SubmissionRefused(f"Please answer every item ({item_id} is incomplete).")
        if item.kind == HITItem.Kind.RESPONSE:
            for key, aspect in wanted.items():
                ratings.append(
                    Rating(
                        survey=survey,
                        annotator=annotator,
                        response_id=item.response_id,
                        aspect=key,
                        score=_int_score(scores[key], aspect, item_id),
                        seconds=seconds,
                        assignment=assignment,
                    )
                )
        else:
            for key, aspect in wanted.items():  # a gold item's other answers are checked, not kept
                _int_score(scores[key], aspect, item_id)
            score = _int_score(scores[Aspect.OVERALL], overall, item_id)
            if item.kind == HITItem.Kind.GOLD:
                passed = score in item.attention_check.accepted_scores
            else:
                passed = score == item.instructed_score
            checks.append(
                AttentionAnswer(assignment=assignment, item=item, score=score, passed=passed, seconds=seconds)
            )
    return ratings, checks, written


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
    pairwise = survey.task_type == Survey.TaskType.PAIRWISE
    failed = failed_checks(checks, items) if pairwise else sum(not c.passed for c in checks)

    in_time = Q(expires_at__isnull=True) | Q(expires_at__gt=now)
    try:
        with transaction.atomic():
            flipped = Assignment.objects.filter(
                in_time, pk=assignment.pk, status=Assignment.Status.ACTIVE, annotator=annotator, token=assignment.token
            ).update(status=Assignment.Status.SUBMITTED, submitted_at=now, flagged=failed > 0)
            if not flipped:
                raise _NotYours
            # Any IntegrityError here (a response this annotator already rated) rolls all of it back.
            # A pairwise survey's "ratings" are its judgements (`_validated_rows`).
            (PairwiseJudgement if pairwise else Rating).objects.bulk_create(ratings)
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
