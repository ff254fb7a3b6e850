"""Annotator identities on a survey's shareable link: created on a POST, resumed only with a secret.

A worker id is a label, not a secret (it shows in links, exports and on researcher pages), so
naming one never makes a browser that identity. A browser holds its identity in a signed cookie;
on another device the annotator types the random resume code shown on their pages. New
identities are capped per client address and hour (`Survey.new_annotators_per_address_hour`) so
that one link holder cannot tie up every open slot with made-up ids.
"""

import datetime
import hashlib
import secrets

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.models import Annotator, LinkIdentity, Survey
from annotation.selectors.raw_rows import RowReader, columns, fetch
from annotation.services.claims import first_claim_of_new_annotator, worker_id_valid

RESUME_CODE_BYTES = 10  # 80 bits, shown as four groups of five characters
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read aloud or typed from paper
WORKER_ID_HELP = "1-64 letters, digits or . _ - @ : (no spaces)"


class IdentityRefused(Exception):
    """No new identity was made; the message says why and is safe to show the annotator."""


class IdentityCapReached(IdentityRefused):
    """The client's address made the survey's hourly number of new identities."""


def resume_code_new():
    """A random code of 20 characters from a 31-letter alphabet (about 99 bits), grouped for reading."""
    return resume_code_display("".join(secrets.choice(CODE_ALPHABET) for _ in range(20)))


def resume_code_display(code):
    """A code as the pages show it: four groups of five, whatever spacing or case it was typed in."""
    raw = resume_code_normalised(code)
    return "-".join(raw[i : i + 5] for i in range(0, len(raw), 5))


def resume_code_normalised(code):
    """What a typed code is compared as: lower case, without spaces or dashes."""
    return "".join(ch for ch in (code or "").lower() if ch.isalnum())


def resume_code_hash(code):
    # The code is ~99 random bits: a plain digest is as strong as a slow one against guessing.
    return hashlib.sha256(resume_code_normalised(code).encode()).hexdigest()


def _newcomers_locked(survey, address):
    """Serialise, until the transaction ends, the newcomers of one survey from one address (the
    unknown address counts as one): the count and the insert that follows it, and two presses of
    Start with one resume code (they come from one browser, so from one address).

    PostgreSQL: a transaction-scoped advisory lock on a 64-bit key digested from both. Elsewhere
    (SQLite) a transaction's first write takes the database's one write lock, which serialises
    newcomers already.
    """
    if connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"newcomers:{survey.pk}:{address or ''}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


def newcomer_cap_check(*, survey, address, joined, now=None, message=None):
    """Refuse one more newcomer from `address` (IdentityCapReached) once the survey's hourly number
    of them (`Survey.new_annotators_per_address_hour`) came from it; returns `survey`.

    `joined`: the survey's newcomer rows, each with `address` and `created_at` (link identities,
    link-platform participants, Prolific sessions). Call it inside the transaction that then adds
    the newcomer: the lock taken here serialises the count and the insert, so two
    simultaneous first visits from one address cannot both slip under the cap. An unknown address
    (None) is not capped.

    The lock is per survey and address (`_newcomers_locked`), not the survey's row: fifty people
    pressing Start at once from fifty addresses do not queue behind one another's commits. `survey`
    is the caller's row, read in this request (its cap is as current as a second read would be).
    """
    now = now or timezone.now()
    _newcomers_locked(survey, address)
    if address is None:
        return survey
    recent = joined.filter(address=address, created_at__gt=now - datetime.timedelta(hours=1)).count()
    if recent >= survey.new_annotators_per_address_hour:
        raise IdentityCapReached(
            message
            or "Too many new participants have joined this study from your network in the last hour. "
            "If you already started, continue in the browser you used; otherwise please try again later."
        )
    return survey


CAP_MESSAGE = (
    "Too many new annotators have joined this study from your network in the last hour. "
    "If you already started, continue in the browser you used or with your resume code; "
    "otherwise please try again later."
)
LABEL_TAKEN = (
    "This identifier is already in use. If it is yours, enter your resume code below; "
    "otherwise choose another one or leave the field empty."
)


def identity_create(*, survey, address, label="", code=None, now=None):
    """A new local annotator for `survey`'s link: `(annotator, resume_code)`.

    `label`: the id the annotator typed or the link named (`?worker=`); empty for a generated one.
    A label someone already uses is refused, never handed over. Raises IdentityRefused when the
    label is invalid or taken, or when `address` made the survey's hourly number of new identities.

    `code`: the resume code the start page chose for this browser (the server's own, signed in its
    form; see annotation.views.task_identity), or None for a new one. The code is bound to the first
    identity made with it, so a second Start with it (another tab, or a second press sent before the
    first's answer set the cookie) gets that identity back, not a second one: its digest is unique,
    and the newcomers' lock (one browser, one address) makes the second press wait for the first and
    then see it; a second press from another address meets the unique digest and reads it then.
    """
    annotator, code, _task = identity_create_and_claim(
        survey=survey, address=address, label=label, code=code, now=now, claim=False
    )
    return annotator, code


def identity_create_and_claim(*, survey, address, label="", code=None, now=None, claim=True):
    """`identity_create`, and with `claim` the new identity's first task taken in the same
    transaction: `(annotator, resume_code, assignment)`.

    `assignment` is None where no task was taken with the identity: an identity this code made
    before (found, not made), a survey handing out nothing new, or every open slot locked by other
    claimers at that instant. The caller then claims as for any known annotator, which says why.
    One transaction, one commit: the Start of fifty newcomers at once queues for the CPU, and the
    identity's statements were half of it (issue 37).
    """
    now = now or timezone.now()
    label = (label or "").strip()
    if label and not worker_id_valid(label):
        raise IdentityRefused(f"Please use {WORKER_ID_HELP} for your identifier, or leave it empty.")
    worker_id = label or f"anon-{secrets.token_hex(8)}"
    code = resume_code_display(code) if code else resume_code_new()
    claiming = False
    try:
        with transaction.atomic():
            annotator, made_now = _identity_made(survey, address, worker_id, code, now)
            claiming = claim and made_now
            task = first_claim_of_new_annotator(survey=survey, annotator=annotator, now=now) if claiming else None
    except IntegrityError:
        # The whole transaction rolled back (no savepoint: two statements fewer on every Start).
        if claiming:  # a race of the claim's own, which `assignment_claim` retries: the identity alone first
            return identity_create_and_claim(
                survey=survey, address=address, label=label, code=code, now=now, claim=False
            )
        # Either the code was bound meanwhile by a Start on another survey or from another address...
        found = identity_for_resume_code(code=code)
        if found is None:
            raise IdentityRefused(LABEL_TAKEN) from None  # ...or the label is someone's already
        return found, code, None
    return annotator, code, task


def _identity_made(survey, address, worker_id, code, now):
    """In the caller's transaction: `(annotator, True)` for a new identity inserted now, or
    `(annotator, False)` for the one this code made before. Raises IdentityCapReached when the
    address made the survey's hourly number of newcomers, IntegrityError when an insert conflicts.
    """
    _newcomers_locked(survey, address)
    # Read under the newcomers' lock: a simultaneous press of this survey's Start with the same
    # code (same browser, same address) waited for the first one's commit and sees its identity
    # here, and the count includes every newcomer committed from this address before the lock.
    made, recent = _identity_and_recent_newcomers(survey, address, code, now)
    if made is not None:
        return made, False  # no newcomer: the cap counted them when the first press made them
    if address is not None and recent >= survey.new_annotators_per_address_hour:
        raise IdentityCapReached(CAP_MESSAGE)
    annotator = Annotator(provider=Survey.Provider.LOCAL, worker_id=worker_id, created_at=timezone.now())
    annotator.pk = _inserted(annotator, ("provider", "worker_id", "created_at"))
    identity = LinkIdentity(
        annotator=annotator,
        survey=survey,
        resume_code_hash=resume_code_hash(code),
        address=address,
        created_at=annotator.created_at,
    )
    _inserted(identity, ("annotator", "survey", "resume_code_hash", "address", "created_at"))
    return annotator, True


def _inserted(instance, names):
    """INSERT one row of `instance`'s fields `names`, written out, and return its new key.

    `Model.objects.create` spent longer building these two statements than the database spent
    running them, on every newcomer's Start; each value is prepared as the ORM's save prepares it
    (SQLite's datetimes as text, PostgreSQL's addresses as inet). A conflict raises IntegrityError
    as `create` would.
    """
    meta, quote = instance._meta, connection.ops.quote_name
    fields = [meta.get_field(name) for name in names]
    values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
            f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote(meta.pk.column)}",
            values,
        )
        return cursor.fetchone()[0]


def _identity_and_recent_newcomers(survey, address, code, now):
    """`(annotator the code belongs to or None, newcomers from `address` in the last hour)`: what
    `identity_for_resume_code` and `newcomer_cap_check` read, in one statement (written out, see
    selectors/raw_rows.py)."""
    quote = connection.ops.quote_name
    identities, people = quote(LinkIdentity._meta.db_table), quote(Annotator._meta.db_table)
    sql = f"""SELECT {columns("w", Annotator)},
            (SELECT COUNT(*) FROM {identities} n WHERE n.survey_id = %s AND n.address = %s AND n.created_at > %s)
        FROM (SELECT 1 AS one) o
        LEFT JOIN {identities} i ON i.resume_code_hash = %s
        LEFT JOIN {people} w ON w.id = i.annotator_id AND w.provider = %s"""
    since = connection.ops.adapt_datetimefield_value(now - datetime.timedelta(hours=1))
    params = [survey.pk, address, since, resume_code_hash(code), str(Survey.Provider.LOCAL)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    reader = RowReader([Annotator])
    (annotator,) = reader.read(row)  # None where the code is no one's
    return annotator, reader.extra(row)[0]


def identity_for_resume_code(*, code):
    """The local annotator a resume code belongs to, or None.

    Looked up by the code's digest (a unique index): the comparison happens on digests, which
    tell a timing observer nothing about the code.
    """
    if len(resume_code_normalised(code)) != 20:
        return None
    # Written out (annotation/selectors/raw_rows.py): every newcomer's Start asks it, and the ORM
    # built the join for longer than the database ran it.
    quote = connection.ops.quote_name
    identities, people = quote(LinkIdentity._meta.db_table), quote(Annotator._meta.db_table)
    sql = f"""SELECT {columns("w", Annotator)} FROM {identities} i JOIN {people} w ON w.id = i.annotator_id
        WHERE i.resume_code_hash = %s AND w.provider = %s"""
    found = fetch(sql, [resume_code_hash(code), str(Survey.Provider.LOCAL)], [Annotator])
    return found[0][0] if found else None


def identities_invite(*, survey, labels):
    """Personal invitations: one new identity per label (an empty label gets a generated id), each
    with its resume code, which the invitation link carries (`/s/<token>/?invite=<code>`).

    Returns `[(annotator, code)]`; all are made or none (a label already in use refuses the lot).
    Invitations do not count towards the per-address cap: the researcher made them, not a client.
    """
    labels = [(label or "").strip() for label in labels]
    bad = [label for label in labels if label and not worker_id_valid(label)]
    if bad:
        raise IdentityRefused(f"Not a valid identifier ({WORKER_ID_HELP}): {', '.join(map(repr, bad))}.")
    named = [label for label in labels if label]
    repeated = sorted({label for label in named if named.count(label) > 1})
    if repeated:
        raise IdentityRefused(f"Given more than once: {', '.join(repeated)}.")
    in_use = Annotator.objects.filter(provider=Survey.Provider.LOCAL, worker_id__in=named)
    taken = sorted(in_use.values_list("worker_id", flat=True))
    if taken:
        raise IdentityRefused(f"Already in use: {', '.join(taken)}. Nothing was created.")
    made = []
    with transaction.atomic():
        for label in labels:
            code = resume_code_new()
            annotator = Annotator.objects.create(
                provider=Survey.Provider.LOCAL, worker_id=label or f"anon-{secrets.token_hex(8)}"
            )
            LinkIdentity.objects.create(
                annotator=annotator, survey=survey, resume_code_hash=resume_code_hash(code), address=None
            )
            made.append((annotator, code))
    return made
