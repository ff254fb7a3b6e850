"""Handing out assignment slots to annotators (the claim), and who an annotator is.

Concurrency: a slot is taken by a conditional UPDATE (`... WHERE status='open'`) whose row count
says who won, so two annotators can never hold the same slot, on any database. On PostgreSQL the
candidate is first picked with `SELECT ... FOR UPDATE SKIP LOCKED`, so 50 simultaneous claims
spread over different rows instead of queueing on one.
"""

import datetime
import re
import time

from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import HIT, Annotator, Assignment, HITItem, HITPage, ReviewAction, Survey
from annotation.selectors.raw_rows import RowReader, columns, fetch
from annotation.services.slots import assignments_expire

WORKER_ID_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,64}$")
NO_MORE_WORK = "There is no more work available for you in this study right now. Thank you!"


def cap_reached_message(most):
    """What an annotator who did the survey's `most` tasks is told (the claim, the start page)."""
    tasks = "task" if most == 1 else "tasks"
    return f"You have completed the maximum of {most} {tasks} in this study: there are no more for you."


class NoWorkAvailable(Exception):
    """No slot can be handed to this annotator now; the message says why (safe to show them)."""


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


def _annotator_locked(*, worker_id, provider, owner_id, exists=False):
    """The annotator's row, locked until the transaction ends, and whether this call created it.

    Annotated with `blocked` (a block of the survey's owner, or of everyone, exists), so one query
    answers both. The lock
    serialises one worker's tabs: two simultaneous requests of the same person must not take two
    HITs. The insert comes first and ignores a conflict: a new worker (every claim in a burst of
    first visits) is then one statement, with no assignments to read; two first visits of the same
    worker need no savepoint; and on SQLite, which has no row locks but one writer at a time,
    writing first takes the database's write lock for this transaction, so what we read next is
    current and stays so.

    `exists`: the caller knows the row exists (it just stored this annotator's submission), so on a
    database with row locks the insert, which would only find the conflict, is left out (SQLite
    still writes first, for its write lock).
    """
    skip_insert = exists and connection.features.has_select_for_update
    created = None if skip_insert else _annotator_insert(worker_id=worker_id, provider=provider)
    if created is not None:
        # Nobody can have blocked a row that no other transaction can see yet.
        created.blocked = False
        return created, True
    return _annotator_row_locked(worker_id=worker_id, provider=provider, owner_id=owner_id), False


def _annotator_row_locked(*, worker_id, provider, owner_id):
    """The annotator's row, locked where the database has row locks, with `blocked` (`blocks_applying_to`).

    Written out (selectors/raw_rows.py): every claim reads it, and the ORM spent longer building
    this statement than the database spent running it.
    """
    quote = connection.ops.quote_name
    people, reviews = quote(Annotator._meta.db_table), quote(ReviewAction._meta.db_table)
    # The same rows as blocks_applying_to(owner_id): a block of the survey's owner, or of everyone.
    whose = "r.actor_id IS NULL" if owner_id is None else "(r.actor_id IS NULL OR r.actor_id = %s)"
    lock = " FOR UPDATE OF w" if connection.features.has_select_for_update else ""
    sql = f"""SELECT {columns("w", Annotator)},
            EXISTS(SELECT 1 FROM {reviews} r WHERE r.annotator_id = w.id AND r.action = %s AND {whose})
        FROM {people} w WHERE w.provider = %s AND w.worker_id = %s{lock}"""
    params = [str(ReviewAction.Action.BLOCK), *([] if owner_id is None else [owner_id]), provider, worker_id]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    reader = RowReader([Annotator])
    (annotator,) = reader.read(row)
    annotator.blocked = bool(reader.extra(row)[0])
    return annotator


def _own_assignments(survey, annotator):
    """The annotator's assignments in the survey, oldest first, each with its HIT (written out, as above)."""
    quote = connection.ops.quote_name
    slots, hits = quote(Assignment._meta.db_table), quote(HIT._meta.db_table)
    sql = f"""SELECT {columns("a", Assignment)}, {columns("h", HIT)}
        FROM {slots} a JOIN {hits} h ON h.id = a.hit_id
        WHERE h.survey_id = %s AND a.annotator_id = %s ORDER BY a.id"""
    own = []
    for assignment, hit in fetch(sql, [survey.pk, annotator.pk], [Assignment, HIT]):
        assignment.hit = hit
        own.append(assignment)
    return own


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


# Items of a check's block that may show a conversation borrowed from another HIT, or a gold check.
CHECK_KINDS = (
    HITItem.Kind.GOLD,
    HITItem.Kind.GOLD_FILLER,
    HITItem.Kind.INSTRUCTED,
    HITItem.Kind.INSTRUCTED_FILLER,
    HITItem.Kind.PAIR_GOLD,
    HITItem.Kind.PAIR_FILLER,
)


def _repeating_items(survey, own):
    """Items of `survey` that would show this annotator again what a check block showed them or
    borrowed: a gold check they met, replies to a conversation they read (a check's fillers
    borrowed from it), or a conversation whose replies they met as fillers (F09), or a whole
    conversation (annotation/kinds/conversation, kinds/acute) they read. The claim takes
    a HIT holding one last; asked only for an annotator who already holds or did a HIT of the
    survey (an unevaluated queryset: the candidates' query reads it as a subquery).

    Overlap contexts are on every HIT as real items and never borrowed (a check borrows off its
    HIT), so they decide nothing here.
    """
    own_ids = [assignment.hit_id for assignment in own]
    seen = HITItem.objects.filter(hit_id__in=own_ids)
    borrowed = seen.filter(kind__in=CHECK_KINDS).exclude(context=None).values("context_id")
    return HITItem.objects.filter(hit__survey_id=survey.pk).filter(
        Q(
            kind=HITItem.Kind.GOLD,
            attention_check_id__in=seen.filter(kind=HITItem.Kind.GOLD).values("attention_check_id"),
        )
        | Q(kind__in=CHECK_KINDS, context_id__in=seen.exclude(context=None).values("context_id"))
        | Q(is_overlap=False, context_id__in=borrowed)
        # A whole conversation they read (a conversation survey's gold copy is a real one with a
        # planted turn: meeting the original after it, or it after the original, gives it away).
        | Q(conversation_id__in=seen.exclude(conversation=None).values("conversation_id"))
    )


def repeating_hit_ids(survey, own):
    """PostgreSQL: the ids of the HITs holding an item of `_repeating_items(survey, own)`, read in
    one hand-written statement.

    The same four rules as `_repeating_items`, in the same SQL shape (so NULLs decide alike), for
    the claim's `ORDER BY ... = ANY(last)`: building and compiling that queryset through the ORM was
    a third of the Python time of a "Submit and next task" request (issue 35), on every claim after
    a returning annotator's first.
    """
    quote = connection.ops.quote_name
    items, hits = quote(HITItem._meta.db_table), quote(HIT._meta.db_table)
    check_kinds = [str(kind) for kind in CHECK_KINDS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH seen AS (
                SELECT kind, context_id, attention_check_id, conversation_id FROM {items} WHERE hit_id = ANY(%s)
            )
            SELECT DISTINCT i.hit_id FROM {items} i JOIN {hits} h ON h.id = i.hit_id
            WHERE h.survey_id = %s AND (
                (i.kind = %s AND i.attention_check_id IN (SELECT attention_check_id FROM seen WHERE kind = %s))
                OR (i.kind = ANY(%s) AND i.context_id IN (SELECT context_id FROM seen WHERE context_id IS NOT NULL))
                OR (NOT i.is_overlap AND i.context_id IN (
                    SELECT context_id FROM seen WHERE kind = ANY(%s) AND context_id IS NOT NULL
                ))
                OR i.conversation_id IN (SELECT conversation_id FROM seen WHERE conversation_id IS NOT NULL)
            )""",
            [
                [a.hit_id for a in own],
                survey.pk,
                str(HITItem.Kind.GOLD),
                str(HITItem.Kind.GOLD),
                check_kinds,
                check_kinds,
            ],
        )
        return [row[0] for row in cursor.fetchall()]


def _candidates(survey, own, pinned, repeating=None):
    """Open slots this annotator may take, first HIT first (not yet locked or taken).

    Leaving out the HITs they hold or did is all it takes for "never a response twice": a regular
    context, with all its responses, sits on exactly one HIT of a survey (`hits_generate`), and
    overlap responses they rated are left off their page (`assignment_items`). The database's
    unique (survey, annotator, response, aspect) constraint backs this: a second rating is refused.
    """
    candidates = (
        Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.OPEN, **pinned)
        .exclude(hit_id__in=[a.hit_id for a in own])
        .select_related("hit")
    )
    if repeating is None:
        return candidates.order_by("hit__position", "slot")
    # HITs that would repeat a check block the annotator met come last (F09).
    repeats = Exists(repeating.filter(hit_id=OuterRef("hit_id")))
    return candidates.annotate(repeats=repeats).order_by("repeats", "hit__position", "slot")


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


def _take_next_skip_locked(survey, annotator, now, own, hit, *, last=()):
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
    only_hit = "AND a.hit_id = %s" if hit is not None else ""
    expires = now + datetime.timedelta(minutes=survey.assignment_minutes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH t AS (
                UPDATE {slots} SET status = %s, annotator_id = %s, assigned_at = %s, expires_at = %s
                WHERE id = (
                    SELECT a.id FROM {slots} a JOIN {hits} h ON h.id = a.hit_id
                    WHERE h.survey_id = %s AND a.status = %s {only_hit} AND NOT (a.hit_id = ANY(%s))
                    ORDER BY a.hit_id = ANY(%s), h.position, a.slot LIMIT 1 FOR UPDATE OF a SKIP LOCKED
                ) AND status = %s
                RETURNING *
            )
            SELECT {columns("t", Assignment)}, {columns("h", HIT)}, {columns("p", HITPage)}
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
                list(last),
                Assignment.Status.OPEN,
            ],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    assignment, assignment.hit, stored = RowReader([Assignment, HIT, HITPage]).read(row)
    # Filled in as select_related would fill a reverse one-to-one: `hit.page` then reads no row.
    HIT._meta.get_field("page").set_cached_value(assignment.hit, stored)
    assignment.hit.survey, assignment.annotator = survey, annotator
    return assignment


def first_claim_of_new_annotator(*, survey, annotator, now=None):
    """The first task of `annotator`, whose row the caller's open transaction just inserted, taken
    in that transaction; None where none was taken there.

    No other transaction can see that row yet, so they hold nothing, did nothing and nobody has
    blocked them: the claim's reads of them (their row under lock, their assignments) would find
    nothing, and the one statement that takes a slot is the whole claim. A newcomer's Start is then
    one transaction and one commit for the identity and the task (issue 37: fifty annotators
    pressing Start at once queue for the server's CPU, and every statement counts).

    None also where the survey hands out nothing new or every open slot was locked by other claimers
    at that instant: the caller then claims as for anyone (`assignment_claim`), which retries and
    says why there is no task.
    """
    if survey.status != Survey.Status.LIVE or survey.max_hits_per_annotator < 1:
        return None
    now = now or timezone.now()
    if connection.vendor == "postgresql":
        assignment = _take_next_skip_locked(survey, annotator, now, [], None)
    else:
        assignment = _take(list(_candidates(survey, [], {})[:20]), survey, annotator, now)
    if assignment is not None:
        assignment.hits_done = 0
        assignment.first_in_survey = True
    return assignment


def _claim_once(survey, worker_id, provider, hit, now, *, known=False):
    """One attempt at a claim, in one transaction: the held HIT, a newly taken slot, or None.

    On PostgreSQL the candidates are read with `FOR UPDATE SKIP LOCKED`: rows other claimers hold
    are skipped, not waited for, so simultaneous claims spread over different slots, and the slot
    we lock is still open when we flip it. Elsewhere (SQLite) the conditional UPDATE alone decides.
    """
    annotator, created = _annotator_locked(
        worker_id=worker_id, provider=provider, owner_id=survey.owner_id, exists=known
    )
    if annotator.blocked:
        raise NoWorkAvailable("There is no more work for you in this study. Thank you.")
    own = []
    if not created:
        # Read under the annotator's lock, so another tab of theirs cannot take a slot meanwhile
        # (a row created by this transaction has no assignments: no one else can see it yet).
        own = _own_assignments(survey, annotator)
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
        # No thanks here: the pages that show it thank the annotator in their own heading.
        raise NoWorkAvailable(cap_reached_message(survey.max_hits_per_annotator))
    # With `hit`, other HITs the annotator holds do not count (MTurk workers may hold several).
    pinned = {"hit": hit} if hit is not None else {}
    # A HIT whose checks would repeat what this annotator met is taken only when no other is free.
    repeats = bool(own) and hit is None
    if connection.vendor == "postgresql":
        last = repeating_hit_ids(survey, own) if repeats else []
        assignment = _take_next_skip_locked(survey, annotator, now, own, hit, last=last)
    else:
        repeating = _repeating_items(survey, own) if repeats else None
        assignment = _take(list(_candidates(survey, own, pinned, repeating)[:20]), survey, annotator, now)
    if assignment is None and not _candidates(survey, own, pinned).exists():
        raise NoWorkAvailable(NO_MORE_WORK)
    if assignment is not None:
        assignment.hits_done = hits_done
        assignment.first_in_survey = not own
    return assignment


def assignment_claim(
    *, survey, worker_id, provider=Survey.Provider.LOCAL, hit=None, now=None, survey_is_current=False, known=False
):
    """The annotator's current assignment in `survey`, or the next free slot for them.

    Never a HIT they already worked on, never a response they already rated, at most
    `max_hits_per_annotator` HITs. `hit` restricts the slot to one HIT (a crowd such as MTurk
    picks the HIT itself). Raises NoWorkAvailable with the reason otherwise. The assignment
    returned carries `hit.survey`, `annotator`, `hits_done` (HITs of the survey they finished)
    and `first_in_survey` (they hold nothing else in it, so no overlap item drops off their
    page), all a HIT page needs.

    `survey_is_current`: the caller read `survey` from the database in this same request (the
    annotator's link does), so it is as fresh as a second read here would be. `known`: the
    annotator's row exists (the caller just stored their submission), so it is not inserted first.
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
                    assignment = _claim_once(survey, worker_id, provider, hit, now, known=known)
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
