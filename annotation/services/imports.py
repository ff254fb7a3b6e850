"""Import datasets and ratings: all rows or none.

The file is read line by line, parsed and checked completely (annotation.importing, then
against the database) before the first write, and the writes run in one transaction, so a bad
file leaves the database as it was. Every problem found is reported, not only the first
(up to MAX_REPORTED of them, then a count). Rows go in as multi-row INSERTs
(services/bulk.py): 50,000 responses and 200,000 ratings import in seconds.
"""

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from annotation.importing import (
    DEFAULT_ASPECT,
    DataImportError,
    ErrorCollector,
    detect_format,
    parse_dataset,
    parse_ratings,
    read_lines,
)
from annotation.models import Annotator, Aspect, Context, Dataset, Rating, Reference, Response, Survey, System
from annotation.quality.services import quality_mark_dirty
from annotation.services.bulk import insert_rows, refresh_statistics

BATCH_SIZE = 5000
NAME_LENGTH = 200  # Dataset.name and Survey.name
IMPORTED_PROVIDER = "imported"


def dataset_import(*, file, name, owner=None, fmt=None, description="", max_bytes=None):
    """Create dataset `name` from a JSONL or CSV file (a path, bytes or file object). Returns the Dataset.

    `max_bytes` (the web's upload limit) refuses a longer file as soon as the reading passes it.
    """
    name = (name or "").strip()
    if not name:
        raise DataImportError("the dataset needs a name")
    if len(name) > NAME_LENGTH:
        raise DataImportError(f"the dataset name is longer than {NAME_LENGTH} characters")
    fmt = detect_format(fmt, file)
    errors = ErrorCollector()
    contexts = parse_dataset(read_lines(file, max_bytes=max_bytes), fmt, errors)
    errors.raise_if_any()
    if Dataset.objects.filter(name=name, owner=owner).exists():  # names are unique per owner
        raise DataImportError(f"a dataset named {name!r} already exists; choose another name")
    try:
        with transaction.atomic():
            dataset = _write_dataset(contexts, name=name, owner=owner, description=description, fmt=fmt)
    except DatabaseError as exc:
        # Only a concurrent import of the same name should get here; everything else was checked above.
        raise DataImportError(f"the dataset could not be saved: {exc}") from None
    refresh_statistics(Context, Reference, Response)
    return dataset


def _write_dataset(contexts, *, name, owner, description, fmt):
    dataset = Dataset.objects.create(name=name, owner=owner, description=description, meta={"source_format": fmt})
    system_names = list(dict.fromkeys(r.system for c in contexts for r in c.responses))
    System.objects.bulk_create([System(dataset=dataset, name=s) for s in system_names], batch_size=BATCH_SIZE)
    systems = dict(System.objects.filter(dataset=dataset).values_list("name", "pk"))
    Context.objects.bulk_create(
        (
            Context(dataset=dataset, external_id=c.external_id, position=i, turns=c.turns, meta=c.meta)
            for i, c in enumerate(contexts)
        ),
        batch_size=BATCH_SIZE,
    )
    # Read the ids back rather than rely on bulk_create returning them (not every backend does).
    context_pks = dict(Context.objects.filter(dataset=dataset).values_list("external_id", "pk"))
    insert_rows(
        Reference,
        ("context", "position", "text"),
        [(context_pks[c.external_id], i, text) for c in contexts for i, text in enumerate(c.references)],
    )
    meta_field = Response._meta.get_field("meta")
    insert_rows(
        Response,
        ("context", "system", "text", "meta"),
        [
            (context_pks[c.external_id], systems[r.system], r.text, meta_field.get_db_prep_save(r.meta, connection))
            for c in contexts
            for r in c.responses
        ],
    )
    return dataset


def ratings_import(*, file, dataset, survey_name=None, owner=None, fmt=None, scale_min=1, scale_max=5, max_bytes=None):
    """Add the judgements in a file to `dataset` as a closed survey of provider "imported". Returns the Survey."""
    if scale_min >= scale_max:
        raise DataImportError(f"the scale {scale_min}-{scale_max} is empty; the minimum must be below the maximum")
    owner = owner if owner is not None else dataset.owner
    survey_name = (survey_name or "").strip() or _free_survey_name(
        f"{dataset.name[: NAME_LENGTH - 20]}-imported", owner=owner
    )
    if len(survey_name) > NAME_LENGTH:
        raise DataImportError(f"the survey name is longer than {NAME_LENGTH} characters")
    if Survey.objects.filter(name=survey_name, owner=owner).exists():  # names are unique per owner
        raise DataImportError(f"a survey named {survey_name!r} already exists; choose another name")
    fmt = detect_format(fmt, file)
    unit = "row" if fmt == "csv" else "line"
    errors = ErrorCollector()
    lines = read_lines(file, max_bytes=max_bytes)
    ratings = parse_ratings(lines, fmt, scale_min=scale_min, scale_max=scale_max, errors=errors)
    response_pks = _match_responses(ratings, dataset, unit, errors)
    errors.raise_if_any()
    try:
        with transaction.atomic():
            survey = _write_ratings(
                ratings,
                response_pks,
                dataset=dataset,
                survey_name=survey_name,
                owner=owner,
                scale=(scale_min, scale_max),
            )
    except DatabaseError as exc:
        raise DataImportError(f"the ratings could not be saved: {exc}") from None
    refresh_statistics(Rating, Annotator)
    quality_mark_dirty(survey=survey)
    return survey


def _free_survey_name(base, *, owner):
    taken = set(Survey.objects.filter(name__startswith=base, owner=owner).values_list("name", flat=True))
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def _match_responses(ratings, dataset, unit, errors):
    """`{(context_id, system): response pk}`; a rating of an unknown context or system goes to `errors`."""
    pairs = {
        (context_id, system): pk
        for pk, context_id, system in Response.objects.filter(context__dataset=dataset).values_list(
            "pk", "context__external_id", "system__name"
        )
    }
    context_ids = set(dataset.contexts.values_list("external_id", flat=True))
    system_names = set(dataset.systems.values_list("name", flat=True))
    for rating in ratings:
        if (rating.context_id, rating.system) in pairs:
            continue
        if rating.context_id not in context_ids:
            message, field = f"unknown context {rating.context_id!r} in dataset {dataset.name!r}", "context_id"
        elif rating.system not in system_names:
            message, field = f"unknown system {rating.system!r} in dataset {dataset.name!r}", "system"
        else:
            message, field = f"system {rating.system!r} has no response to context {rating.context_id!r}", "system"
        errors.add(DataImportError(message, line=rating.line, field=field, unit=unit))
    return pairs


def _write_ratings(ratings, response_pks, *, dataset, survey_name, owner, scale):
    survey = Survey.objects.create(
        dataset=dataset,
        name=survey_name,
        owner=owner,
        provider=Survey.Provider.IMPORTED,
        status=Survey.Status.CLOSED,
    )
    aspects = sorted({r.aspect for r in ratings}, key=lambda key: (key != DEFAULT_ASPECT, key))
    Aspect.objects.bulk_create(
        Aspect(survey=survey, key=key, position=i, scale_min=scale[0], scale_max=scale[1])
        for i, key in enumerate(aspects)
    )
    annotators = _annotators({r.worker for r in ratings})
    # created_at is the same for every row: prepared once, in the backend's form.
    created_at = Rating._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
    insert_rows(
        Rating,
        ("survey", "annotator", "response", "aspect", "score", "seconds", "created_at"),
        [
            (
                survey.pk,
                annotators[r.worker],
                response_pks[(r.context_id, r.system)],
                r.aspect,
                r.score,
                r.seconds,
                created_at,
            )
            for r in ratings
        ],
    )
    systems = {system for _, system in {(r.context_id, r.system) for r in ratings}}
    survey.systems.set(dataset.systems.filter(name__in=systems))
    return survey


def _annotators(workers):
    """`{worker_id: annotator pk}` for imported workers, creating the missing ones."""
    existing = _annotator_pks(workers)
    missing = sorted(workers - set(existing))
    Annotator.objects.bulk_create(
        [Annotator(provider=IMPORTED_PROVIDER, worker_id=w) for w in missing], batch_size=BATCH_SIZE
    )
    if missing:
        existing.update(_annotator_pks(missing))
    return existing


def _annotator_pks(workers):
    # In chunks: SQLite refuses queries with more than ~32,000 parameters.
    workers = sorted(workers)
    found = {}
    for start in range(0, len(workers), BATCH_SIZE):
        chunk = workers[start : start + BATCH_SIZE]
        found.update(
            Annotator.objects.filter(provider=IMPORTED_PROVIDER, worker_id__in=chunk).values_list("worker_id", "pk")
        )
    return found
