"""Import conversation ratings and ACUTE-style comparisons into a dataset of conversations: all or nothing.

Every line is checked (annotation.importing.conversation_answers, then against the dataset: the
conversation exists, a rated turn exists and is the system's, two compared conversations are of two
systems, nothing was already imported for the same worker) before the first write; the writes run
in one transaction. Workers become annotators of provider "imported", as with imported ratings.

Each aspect has one scale per dataset (ConversationAspect), set by the first import that uses it:
`scales` names one per aspect (`{"consistent": (0, 1)}`), `scale_min`/`scale_max` the others'. A
later import may leave the scale out; one that gives another scale for the aspect is refused, since
scores on two scales under one name could not be averaged.
"""

from dataclasses import dataclass, field

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from annotation.importing import DataImportError, ErrorCollector, detect_format, read_lines
from annotation.importing.conversation_answers import parse_conversation_judgements, parse_conversation_ratings
from annotation.models import ConversationAspect, ConversationJudgement, ConversationRating
from annotation.models.conversations import SYSTEM_SPEAKER, ConversationTurn
from annotation.services.bulk import insert_rows, refresh_statistics
from annotation.services.imports import IMPORTED_PROVIDER, _annotators

DEFAULT_SCALE = (1, 5)


@dataclass
class AnswersImported:
    """What an import added: counts for the command's and the page's message."""

    count: int
    annotators: int
    aspects: dict = field(default_factory=dict)  # {aspect: (min, max)}, ratings only


def conversation_ratings_import(
    *, file, dataset, fmt=None, scale_min=None, scale_max=None, scales=None, max_bytes=None
):
    """Add the ratings in a file to `dataset`'s conversations. Returns AnswersImported."""
    scales = dict(scales or {})
    default_given = scale_min is not None or scale_max is not None
    default = (
        DEFAULT_SCALE[0] if scale_min is None else scale_min,
        DEFAULT_SCALE[1] if scale_max is None else scale_max,
    )
    for aspect, (low, high) in [("(default)", default), *scales.items()]:
        if low >= high:
            raise DataImportError(f"the scale {low}-{high} of {aspect} is empty; the minimum must be below the maximum")
    stored = {a.key: (a.scale_min, a.scale_max) for a in dataset.conversation_aspects.all()}

    def scale_of(aspect):
        return scales.get(aspect) or stored.get(aspect) or default

    fmt = detect_format(fmt, file)
    unit = "row" if fmt == "csv" else "line"
    errors = ErrorCollector()
    ratings = parse_conversation_ratings(read_lines(file, max_bytes=max_bytes), fmt, scale_of=scale_of, errors=errors)
    used = sorted({r.aspect for r in ratings})
    for aspect in used:
        given = scales.get(aspect) or (default if default_given else None)
        if aspect in stored and given is not None and given != stored[aspect]:
            errors.add(
                DataImportError(
                    f"aspect {aspect!r} already has the scale {stored[aspect][0]}-{stored[aspect][1]} in dataset "
                    f"{dataset.name!r}, not {given[0]}-{given[1]}; give its scale or leave it out"
                )
            )
    targets = _match_ratings(ratings, dataset, unit, errors)
    errors.raise_if_any()
    try:
        with transaction.atomic():
            ConversationAspect.objects.bulk_create(
                ConversationAspect(dataset=dataset, key=a, scale_min=scale_of(a)[0], scale_max=scale_of(a)[1])
                for a in used
                if a not in stored
            )
            annotators = _annotators({r.worker for r in ratings})
            created_at = _now_for_db(ConversationRating)
            insert_rows(
                ConversationRating,
                ("annotator", "conversation", "turn", "aspect", "score", "seconds", "created_at"),
                [
                    (
                        annotators[r.worker],
                        *targets[(r.conversation_id, r.turn)],
                        r.aspect,
                        r.score,
                        r.seconds,
                        created_at,
                    )
                    for r in ratings
                ],
            )
    except DatabaseError as exc:
        raise DataImportError(f"the ratings could not be saved: {exc}") from None
    refresh_statistics(ConversationRating)
    return AnswersImported(
        count=len(ratings), annotators=len({r.worker for r in ratings}), aspects={a: scale_of(a) for a in used}
    )


def _match_ratings(ratings, dataset, unit, errors):
    """`{(conversation_id, turn index or None): (conversation pk, turn pk or None)}`; problems go to `errors`."""
    conversations = dict(dataset.conversations.values_list("external_id", "pk"))
    wanted_turns = {r.conversation_id for r in ratings if r.turn is not None}
    turns = {
        (external, index): (pk, speaker)
        for pk, external, index, speaker in ConversationTurn.objects.filter(
            conversation__dataset=dataset, conversation__external_id__in=wanted_turns
        ).values_list("pk", "conversation__external_id", "index", "speaker")
    }
    n_turns = {}
    for external, index in turns:
        n_turns[external] = max(n_turns.get(external, 0), index + 1)
    done = set(
        ConversationRating.objects.filter(
            conversation__dataset=dataset, annotator__provider=IMPORTED_PROVIDER
        ).values_list("annotator__worker_id", "conversation__external_id", "turn__index", "aspect")
    )
    targets = {}
    for rating in ratings:

        def refuse(message, field, rating=rating):
            errors.add(DataImportError(message, line=rating.line, field=field, unit=unit))

        if rating.conversation_id not in conversations:
            refuse(f"unknown conversation {rating.conversation_id!r} in dataset {dataset.name!r}", "conversation_id")
            continue
        turn_pk = None
        if rating.turn is not None:
            found = turns.get((rating.conversation_id, rating.turn))
            if found is None:
                n = n_turns.get(rating.conversation_id, 0)
                refuse(f"conversation {rating.conversation_id!r} has {n} turns (0 to {n - 1})", "turn")
                continue
            turn_pk, speaker = found
            if speaker != SYSTEM_SPEAKER:
                refuse(
                    f"turn {rating.turn} of conversation {rating.conversation_id!r} is {speaker!r}'s, not the "
                    f"system's: only system turns are rated",
                    "turn",
                )
                continue
        if (rating.worker, rating.conversation_id, rating.turn, rating.aspect) in done:
            refuse(f"worker {rating.worker!r} already has this rating in dataset {dataset.name!r}", "worker")
            continue
        targets[(rating.conversation_id, rating.turn)] = (conversations[rating.conversation_id], turn_pk)
    return targets


def conversation_judgements_import(*, file, dataset, fmt=None, max_bytes=None):
    """Add the side-by-side comparisons in a file to `dataset`'s conversations. Returns AnswersImported."""
    fmt = detect_format(fmt, file)
    unit = "row" if fmt == "csv" else "line"
    errors = ErrorCollector()
    judgements = parse_conversation_judgements(read_lines(file, max_bytes=max_bytes), fmt, errors=errors)
    conversations = {
        external: (pk, system)
        for pk, external, system in dataset.conversations.values_list("pk", "external_id", "system__name")
    }
    done = set()
    for worker, a, b, question in ConversationJudgement.objects.filter(
        conversation_a__dataset=dataset, annotator__provider=IMPORTED_PROVIDER
    ).values_list("annotator__worker_id", "conversation_a__external_id", "conversation_b__external_id", "question"):
        done.add((worker, tuple(sorted((a, b))), question))
    for judgement in judgements:
        _check_judgement(judgement, conversations=conversations, done=done, dataset=dataset, unit=unit, errors=errors)
    errors.raise_if_any()
    try:
        with transaction.atomic():
            annotators = _annotators({j.worker for j in judgements})
            created_at = _now_for_db(ConversationJudgement)
            insert_rows(
                ConversationJudgement,
                (
                    "annotator",
                    "conversation_a",
                    "conversation_b",
                    "winner",
                    "question",
                    "reason",
                    "position_known",
                    "seconds",
                    "created_at",
                ),
                [
                    (
                        annotators[j.worker],
                        conversations[j.conversation_a][0],
                        conversations[j.conversation_b][0],
                        j.winner,
                        j.question,
                        j.reason,
                        False,  # a file's a/b order is not the order the annotator saw
                        j.seconds,
                        created_at,
                    )
                    for j in judgements
                ],
            )
    except DatabaseError as exc:
        raise DataImportError(f"the judgements could not be saved: {exc}") from None
    refresh_statistics(ConversationJudgement)
    return AnswersImported(count=len(judgements), annotators=len({j.worker for j in judgements}))


def _check_judgement(judgement, *, conversations, done, dataset, unit, errors):
    for side in ("conversation_a", "conversation_b"):
        if getattr(judgement, side) not in conversations:
            message = f"unknown conversation {getattr(judgement, side)!r} in dataset {dataset.name!r}"
            errors.add(DataImportError(message, line=judgement.line, field=side, unit=unit))
            return
    system_a = conversations[judgement.conversation_a][1]
    if system_a == conversations[judgement.conversation_b][1]:
        message = f"both conversations are system {system_a!r}'s: a comparison is between two systems"
        errors.add(DataImportError(message, line=judgement.line, field="conversation_b", unit=unit))
        return
    pair = tuple(sorted((judgement.conversation_a, judgement.conversation_b)))
    if (judgement.worker, pair, judgement.question) in done:
        message = f"worker {judgement.worker!r} already has this comparison in dataset {dataset.name!r}"
        errors.add(DataImportError(message, line=judgement.line, field="worker", unit=unit))


def _now_for_db(model):
    # created_at is the same for every row: prepared once, in the backend's form.
    return model._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
