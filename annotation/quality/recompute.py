"""Recompute a survey's quality: the automatic decisions and the cached report.

Kept apart from services.py so the Celery task can call it without importing the module that
queues the task.
"""

import time

from django.db import transaction
from django.utils import timezone

from annotation.kinds.registry import kind_for
from annotation.models import ExclusionDecision, QualityReport, Survey
from annotation.quality import data, report
from annotation.quality.integrity_report import prepare_vectors, survey_integrity


def _outcome_key(excluded, reasons):
    # Reasons carry the measured value; a kappa moving from 0.11 to 0.12 is not a new decision.
    return bool(excluded), sorted(reason["rule"] for reason in reasons)


def _record_auto_decisions(survey, outcomes):
    """Store an automatic decision for each annotator whose automatic outcome changed."""
    latest = {
        decision.annotator_id: decision
        for decision in ExclusionDecision.objects.filter(survey=survey, source=ExclusionDecision.Source.AUTO).order_by(
            "created_at", "id"
        )
    }
    new = [
        ExclusionDecision(
            survey=survey,
            annotator_id=annotator_id,
            excluded=outcome.excluded,
            reasons=outcome.reasons,
            source=ExclusionDecision.Source.AUTO,
        )
        for annotator_id, outcome in outcomes.items()
        if annotator_id not in latest
        or _outcome_key(outcome.excluded, outcome.reasons)
        != _outcome_key(latest[annotator_id].excluded, latest[annotator_id].reasons)
    ]
    ExclusionDecision.objects.bulk_create(new)
    return new


def quality_recompute(*, survey):
    """Apply the exclusion rules, record changed automatic decisions and cache the report.

    Returns the QualityReport. Safe to run at any time and twice in a row (the second run
    records nothing new). Written replies are encoded first (MiniLM, for the similarity flags),
    outside the transaction: loading the model takes seconds, and no lock should wait on it.
    """
    prepare_vectors(survey)
    return _quality_recompute(survey=survey)


@transaction.atomic
def _quality_recompute(*, survey):
    started = time.monotonic()
    survey = Survey.objects.get(pk=survey.pk)  # fresh settings
    # Two recomputes of one survey must not interleave (they would both record decisions), so
    # they queue on the report row. Nothing else locks it: submissions never wait on this.
    QualityReport.objects.get_or_create(survey=survey)
    cached = QualityReport.objects.select_for_update().get(survey=survey)
    # Flags with evidence and competence (issue 40) first: the integrity rules judge them.
    integrity = survey_integrity(survey)
    cached.data = report.survey_report(
        survey, record=lambda outcomes: _record_auto_decisions(survey, outcomes), integrity=integrity
    )
    cached.data.update(kind_for(survey).quality_extras(survey))  # the kind's own figures (pairwise)
    cached.data["integrity"] = integrity
    # Read after the decisions this run recorded (they are part of the report). A rating that
    # commits between the report's reads and this one is missed here, but its writer's
    # `quality_mark_dirty` queues another recompute.
    cached.fingerprint = data.survey_fingerprint(survey)
    cached.computed_at = timezone.now()
    cached.seconds = time.monotonic() - started
    cached.save()
    return cached
