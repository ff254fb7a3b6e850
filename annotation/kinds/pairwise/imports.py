"""Importing pairwise judgements as a closed survey of their own (provider "imported"): all or nothing.

A side named `(reference)` (REFERENCE_SYSTEM_NAME, as export_pairwise writes it) is the context's
first reference: the dataset's reference pseudo-system is made on demand (annotation.kinds.
pairwise.references) and the survey is marked as comparing with the reference.
"""

from django.db import DatabaseError, transaction

from annotation.importing import DataImportError, ErrorCollector, detect_format, read_lines
from annotation.kinds.pairwise.page import PAIRWISE_QUESTION
from annotation.kinds.pairwise.parsing import DEFAULT_ASPECT, parse_pairwise
from annotation.kinds.pairwise.references import reference_system_ensure
from annotation.models import REFERENCE_SYSTEM_NAME, Aspect, PairwiseJudgement, Reference, Response, Survey
from annotation.quality.services import quality_mark_dirty
from annotation.services.imports import NAME_LENGTH, _annotators, _free_survey_name


def pairwise_import(*, file, dataset, survey_name=None, owner=None, fmt=None, max_bytes=None):
    """Add the pairwise judgements in a file to `dataset` as a closed pairwise survey. Returns it.

    Every line is checked before anything is written; any problem (named by line and field)
    raises DataImportError and nothing is stored. Imported judgements have no known left/right
    position (`position_known` false): position bias is measured on collected ones only.
    """
    owner = owner if owner is not None else dataset.owner
    survey_name = (survey_name or "").strip() or _free_survey_name(
        f"{dataset.name[: NAME_LENGTH - 20]}-pairwise", owner=owner
    )
    if len(survey_name) > NAME_LENGTH:
        raise DataImportError(f"the survey name is longer than {NAME_LENGTH} characters")
    if Survey.objects.filter(name=survey_name, owner=owner).exists():
        raise DataImportError(f"a survey named {survey_name!r} already exists; choose another name")
    fmt = detect_format(fmt, file)
    unit = "row" if fmt == "csv" else "line"
    errors = ErrorCollector()
    judgements = parse_pairwise(read_lines(file, max_bytes=max_bytes), fmt, errors=errors)
    responses = _match(judgements, dataset, unit, errors)
    errors.raise_if_any()
    try:
        with transaction.atomic():
            if responses_have_reference(judgements):
                responses.update(_reference_responses(dataset))
            survey = _write(judgements, responses, dataset=dataset, survey_name=survey_name, owner=owner)
    except DatabaseError as exc:
        raise DataImportError(f"the judgements could not be saved: {exc}") from None
    quality_mark_dirty(survey=survey)
    return survey


def _match(judgements, dataset, unit, errors):
    """`{(context_id, system): (response pk, context pk)}`; unknown contexts or systems go to `errors`."""
    rows = Response.objects.filter(context__dataset=dataset).values_list(
        "pk", "context_id", "context__external_id", "system__name"
    )
    found = {(external, system): (pk, context) for pk, context, external, system in rows}
    contexts = set(dataset.contexts.values_list("external_id", flat=True))
    systems = set(dataset.systems.values_list("name", flat=True))
    # The reference side: contexts with a reference (its response may not exist yet; made on writing).
    referenced = Reference.objects.filter(context__dataset=dataset).values_list("context__external_id", flat=True)
    found.update({(external, REFERENCE_SYSTEM_NAME): None for external in referenced})
    for judgement in judgements:
        if judgement.context_id not in contexts:
            errors.add(
                DataImportError(
                    f"unknown context {judgement.context_id!r} in dataset {dataset.name!r}",
                    line=judgement.line,
                    field="context_id",
                    unit=unit,
                )
            )
            continue
        for field in ("system_a", "system_b"):
            system = getattr(judgement, field)
            if (judgement.context_id, system) in found:
                continue
            if system == REFERENCE_SYSTEM_NAME:
                message = f"context {judgement.context_id!r} has no reference to compare with"
            elif system not in systems:
                message = f"unknown system {system!r} in dataset {dataset.name!r}"
            else:
                message = f"system {system!r} has no response to context {judgement.context_id!r}"
            errors.add(DataImportError(message, line=judgement.line, field=field, unit=unit))
            break
    return found


def _reference_responses(dataset):
    """`{(context_id, REFERENCE_SYSTEM_NAME): (response pk, context pk)}`, the pseudo-system made if need be."""
    system = reference_system_ensure(dataset=dataset)
    rows = Response.with_references.filter(system=system).values_list("pk", "context_id", "context__external_id")
    return {(external, REFERENCE_SYSTEM_NAME): (pk, context) for pk, context, external in rows}


def _write(judgements, responses, *, dataset, survey_name, owner):
    survey = Survey.objects.create(
        dataset=dataset,
        name=survey_name,
        owner=owner,
        task_type=Survey.TaskType.PAIRWISE,
        provider=Survey.Provider.IMPORTED,
        status=Survey.Status.CLOSED,
        reference_pairs=Survey.ReferencePairs.ALSO
        if responses_have_reference(judgements)
        else Survey.ReferencePairs.NONE,
    )
    aspects = sorted({j.aspect for j in judgements}, key=lambda key: (key != DEFAULT_ASPECT, key))
    Aspect.objects.bulk_create(
        Aspect(survey=survey, key=key, position=i, question=PAIRWISE_QUESTION) for i, key in enumerate(aspects)
    )
    annotators = _annotators({j.worker for j in judgements})
    PairwiseJudgement.objects.bulk_create(
        (
            PairwiseJudgement(
                survey=survey,
                annotator_id=annotators[j.worker],
                context_id=responses[(j.context_id, j.system_a)][1],
                response_a_id=responses[(j.context_id, j.system_a)][0],
                response_b_id=responses[(j.context_id, j.system_b)][0],
                aspect=j.aspect,
                winner=j.winner,
                seconds=j.seconds,
                position_known=False,
            )
            for j in judgements
        ),
        batch_size=2000,
    )
    systems = {j.system_a for j in judgements} | {j.system_b for j in judgements}
    survey.systems.set(dataset.systems.filter(name__in=systems))  # the reference is no chosen system
    return survey


def responses_have_reference(judgements):
    return any(REFERENCE_SYSTEM_NAME in (j.system_a, j.system_b) for j in judgements)
