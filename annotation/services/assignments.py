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
from django.utils import timezone

from annotation.crowd import get_provider
from annotation.models import (
    Annotator,
    Aspect,
    Assignment,
    AttentionAnswer,
    HITItem,
    Rating,
    ReviewAction,
    Survey,
    WrittenResponse,
)
from annotation.models.ratings import new_assignment_token
from annotation.quality.services import quality_mark_dirty

WORKER_ID_RE = re.compile(r"^[A-Za-z0-9_.@:-]{1,64}$")
MAX_WRITTEN_CHARS = 2000
MAX_SECONDS = 24 * 3600


class NoWorkAvailable(Exception):
    """No slot can be handed to this annotator now; the message says why (safe to show them)."""


class SubmissionRefused(Exception):
    """A submission was refused and nothing was stored; the message is safe to show the annotator."""


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


def _rated_response_ids(survey, annotator):
    return Rating.objects.filter(survey=survey, annotator=annotator).values("response_id")


def assignment_items(*, assignment, annotator=None):
    """The items an assignment shows: its HIT's items less overlap responses already rated.

    Computed the same way when the page is rendered and when it is submitted; an annotator holds
    at most one active assignment per survey, so nothing changes in between.
    """
    annotator = annotator or assignment.annotator
    items = HITItem.objects.filter(hit_id=assignment.hit_id).select_related("context", "response", "attention_check")
    if annotator is None or not any(item.is_overlap for item in items):
        return list(items)
    survey_id = assignment.hit.survey_id
    already = set(
        Rating.objects.filter(survey_id=survey_id, annotator=annotator)
        .exclude(assignment=assignment)
        .values_list("response_id", flat=True)
    )
    return [item for item in items if not (item.is_overlap and item.response_id in already)]


def _claimable(survey, annotator):
    rated = _rated_response_ids(survey, annotator)
    # Separate subqueries: exclude() across multi-valued relations would not pin one item.
    hits_done = Assignment.objects.filter(hit__survey=survey, annotator=annotator).values("hit_id")
    hits_rated = HITItem.objects.filter(hit__survey=survey, is_overlap=False, response__in=rated).values("hit_id")
    return (
        Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.OPEN)
        .exclude(hit_id__in=hits_done)
        .exclude(hit_id__in=hits_rated)
        .order_by("hit__position", "slot")
    )


def _take(candidate_ids, annotator, now, minutes):
    for pk in candidate_ids:
        try:
            with transaction.atomic():
                taken = Assignment.objects.filter(pk=pk, status=Assignment.Status.OPEN).update(
                    status=Assignment.Status.ACTIVE,
                    annotator=annotator,
                    assigned_at=now,
                    expires_at=now + datetime.timedelta(minutes=minutes),
                )
        except IntegrityError:
            # The same annotator took another slot on this HIT meanwhile (two tabs).
            continue
        if taken:
            return Assignment.objects.select_related("hit__survey", "annotator").get(pk=pk)
    return None


def assignment_claim(*, survey, worker_id, provider=Survey.Provider.LOCAL, hit=None, now=None):
    """The annotator's current assignment in `survey`, or the next free slot for them.

    Never a HIT they already worked on, never a response they already rated, at most
    `max_hits_per_annotator` HITs. `hit` restricts the slot to one HIT (a crowd such as MTurk
    picks the HIT itself). Raises NoWorkAvailable with the reason otherwise.
    """
    now = now or timezone.now()
    survey = Survey.objects.get(pk=survey.pk)
    # A paused survey still lets annotators resume the HIT they hold; it hands out nothing new.
    if survey.status not in (Survey.Status.LIVE, Survey.Status.PAUSED):
        raise NoWorkAvailable("This study is not accepting work right now.")
    annotator = annotator_get(worker_id=worker_id, provider=provider)
    if ReviewAction.objects.filter(annotator=annotator, action=ReviewAction.Action.BLOCK).exists():
        raise NoWorkAvailable("There is no more work for you in this study. Thank you.")

    # One query for the annotator's own work here: the current HIT, abandoned ones, and the count.
    own = list(
        Assignment.objects.filter(hit__survey=survey, annotator=annotator).values_list("pk", "status", "expires_at")
    )
    if any(status == Assignment.Status.ACTIVE and expires and expires <= now for _pk, status, expires in own):
        # Their own abandoned HIT goes back to the pool now rather than at the next sweep.
        assignments_expire(now=now, survey=survey, annotator=annotator)
        own = [row for row in own if not (row[1] == Assignment.Status.ACTIVE and row[2] and row[2] <= now)]
    active = Assignment.objects.filter(pk__in=[pk for pk, status, _ in own if status == Assignment.Status.ACTIVE])
    if hit is not None:
        active = active.filter(hit=hit)
    current = active.values_list("pk", flat=True).first() if any(r[1] == "active" for r in own) else None
    if current is not None:
        return Assignment.objects.select_related("hit__survey", "annotator").get(pk=current)
    if survey.status != Survey.Status.LIVE:
        raise NoWorkAvailable("This study is not accepting work right now.")
    if len(own) >= survey.max_hits_per_annotator:
        raise NoWorkAvailable(
            f"You have completed the maximum of {survey.max_hits_per_annotator} HITs in this study. Thank you!"
        )

    # With `hit`, other HITs the annotator holds do not count (MTurk workers may hold several).
    pinned = {"hit": hit} if hit is not None else {}
    candidates = _claimable(survey, annotator).filter(**pinned)
    for attempt in range(5):
        if connection.features.has_select_for_update_skip_locked:
            with transaction.atomic():
                # One annotator at a time per worker id: two tabs must not take two HITs at once.
                Annotator.objects.select_for_update().filter(pk=annotator.pk).first()
                raced = Assignment.objects.filter(
                    hit__survey=survey, annotator=annotator, status=Assignment.Status.ACTIVE, **pinned
                ).first()
                if raced is not None:
                    return raced  # another request of this annotator claimed while we waited for the lock
                # Rows other claimers hold are skipped, not waited for, so claims spread out.
                ids = list(
                    candidates.select_for_update(skip_locked=True, of=("self",)).values_list("pk", flat=True)[:5]
                )
                assignment = _take(ids, annotator, now, survey.assignment_minutes)
        else:
            with transaction.atomic():
                assignment = _take(
                    list(candidates.values_list("pk", flat=True)[:20]), annotator, now, survey.assignment_minutes
                )
                # No row locks here: if another tab of this annotator won a slot first (SQLite runs one
                # writer at a time, so it is visible now), give ours back and use theirs.
                first = (
                    Assignment.objects.filter(hit__survey=survey, annotator=annotator, status=Assignment.Status.ACTIVE)
                    .order_by("assigned_at", "pk")
                    .first()
                )
                if assignment and first and first.pk != assignment.pk and hit is None:
                    Assignment.objects.filter(pk=assignment.pk).update(
                        status=Assignment.Status.OPEN, annotator=None, assigned_at=None, expires_at=None
                    )
                    assignment = Assignment.objects.select_related("hit__survey", "annotator").get(pk=first.pk)
        if assignment:
            return assignment
        if not candidates.exists():
            break
        # Every free slot was locked by other claimers at that instant; they may yet roll back.
        time.sleep(0.02 * (attempt + 1))
    raise NoWorkAvailable("There is no more work available for you in this study right now. Thank you!")


def parse_answers(data):
    """Turn form fields (`score-<item>-<aspect>`, `seconds-<item>`, `text-<item>`) into answers.

    Returns `{item_id: {"scores": {aspect: str}, "seconds": str|None, "text": str|None}}` for the
    submit service, which does all validation; unknown item ids are kept so it can refuse them.
    """
    answers = {}
    for key in data:
        match = re.match(r"^(score|seconds|text)-(\d+)(?:-([\w-]+))?$", key)
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


def _seconds(value):
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds <= MAX_SECONDS else None


def _result(assignment, replayed):
    checks = list(assignment.attention_answers.values_list("passed", flat=True))
    return SubmitResult(
        assignment_id=assignment.pk,
        ratings=assignment.ratings.count(),
        written=assignment.written_responses.count(),
        checks_passed=sum(checks),
        checks_failed=len(checks) - sum(checks),
        status=assignment.status,
        flagged=assignment.flagged,
        replayed=replayed,
    )


def _validated_rows(assignment, annotator, survey, items, answers):
    aspects = {a.key: a for a in survey.aspects.all()}
    overall = aspects[Aspect.OVERALL]
    by_id = {item.pk: item for item in items}
    unknown = sorted(set(answers) - set(by_id))
    if unknown:
        raise SubmissionRefused(f"Unknown item(s) {', '.join(map(str, unknown))}: they are not on this HIT.")
    missing = sorted(set(by_id) - set(answers))
    if missing:
        raise SubmissionRefused(f"Please answer every item ({len(missing)} unanswered).")

    ratings, checks, written = [], [], []
    for item_id, item in by_id.items():
        answer = answers[item_id]
        seconds = _seconds(answer.get("seconds"))
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
        wanted = aspects if item.kind == HITItem.Kind.RESPONSE else {Aspect.OVERALL: overall}
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
            score = _int_score(scores[Aspect.OVERALL], overall, item_id)
            if item.kind == HITItem.Kind.GOLD:
                passed = score in item.attention_check.accepted_scores
            else:
                passed = score == item.instructed_score
            checks.append(
                AttentionAnswer(assignment=assignment, item=item, score=score, passed=passed, seconds=seconds)
            )
    return ratings, checks, written


def assignment_submit(*, assignment, answers, annotator=None, token=None, now=None):
    """Store one assignment's answers: everything in one transaction, or nothing.

    `answers`: `{item_id: {"scores": {aspect: score}, "seconds": float, "text": str}}` (see
    `parse_answers`). `annotator`/`token`, when given, must match the assignment. A replay of an
    already submitted assignment changes nothing and returns its stored result. Refusals raise
    SubmissionRefused and store nothing.
    """
    now = now or timezone.now()
    assignment = Assignment.objects.select_related("hit__survey", "annotator").get(pk=assignment.pk)
    if token is not None and not secrets.compare_digest(str(token), assignment.token):
        raise SubmissionRefused("This link does not belong to this assignment.")
    if annotator is not None and assignment.annotator_id != annotator.pk:
        raise SubmissionRefused("This assignment belongs to another annotator.")
    if assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED):
        return _result(assignment, replayed=True)
    if assignment.status != Assignment.Status.ACTIVE or assignment.annotator_id is None:
        raise SubmissionRefused("This assignment is no longer yours: it expired and was given to someone else.")
    if assignment.expires_at and assignment.expires_at <= now:
        raise SubmissionRefused("This assignment expired before it was submitted; nothing was stored.")
    survey = assignment.hit.survey
    annotator = assignment.annotator
    answers = {int(k): v for k, v in answers.items()}
    items = assignment_items(assignment=assignment, annotator=annotator)
    ratings, checks, written = _validated_rows(assignment, annotator, survey, items, answers)
    failed = sum(not c.passed for c in checks)

    with transaction.atomic():
        flipped = Assignment.objects.filter(
            pk=assignment.pk, status=Assignment.Status.ACTIVE, annotator=annotator
        ).update(status=Assignment.Status.SUBMITTED, submitted_at=now, flagged=failed > 0)
        if not flipped:
            # A concurrent request (double click) submitted it first; that one stored the answers.
            assignment.refresh_from_db()
            if assignment.status == Assignment.Status.SUBMITTED:
                return _result(assignment, replayed=True)
            raise SubmissionRefused("This assignment is no longer yours; nothing was stored.")
        try:
            with transaction.atomic():
                Rating.objects.bulk_create(ratings)
        except IntegrityError:
            raise SubmissionRefused("Some of these responses were already rated by you; nothing was stored.") from None
        AttentionAnswer.objects.bulk_create(checks)
        WrittenResponse.objects.bulk_create(written)
        assignment.refresh_from_db()
        if failed:
            _apply_attention_policy(assignment, survey, failed)
    # Agreement and exclusions are recomputed by a debounced task, never in this request.
    quality_mark_dirty(survey=survey)
    assignment.refresh_from_db()
    return _result(assignment, replayed=False)


def _apply_attention_policy(assignment, survey, failed):
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
        Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.REJECTED)
        ReviewAction.objects.create(
            survey=survey, annotator=assignment.annotator, assignment=assignment, action="reject", reason=reason
        )
        assignment.status = Assignment.Status.REJECTED
        transaction.on_commit(lambda: get_provider(survey).reject(assignment=assignment, reason=reason))


def assignments_expire(*, now=None, survey=None, annotator=None):
    """Return active assignments past their deadline to the pool. Returns how many were returned.

    Each returned slot gets a new token, so the old link cannot submit into someone else's work.
    """
    now = now or timezone.now()
    stale = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now)
    if survey is not None:
        stale = stale.filter(hit__survey=survey)
    if annotator is not None:
        stale = stale.filter(annotator=annotator)
    returned = 0
    for pk in stale.values_list("pk", flat=True):
        returned += Assignment.objects.filter(pk=pk, status=Assignment.Status.ACTIVE, expires_at__lte=now).update(
            status=Assignment.Status.OPEN,
            annotator=None,
            assigned_at=None,
            expires_at=None,
            token=new_assignment_token(),
        )
    return returned
