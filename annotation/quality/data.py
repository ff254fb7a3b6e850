"""Database reads for quality control, shared by the services and the selectors."""

import hashlib

from django.db.models import Count, Max

from annotation.kinds.registry import kind_for
from annotation.models import Annotator, Aspect, Assignment, ExclusionDecision, HITItem, Rating
from annotation.models.ratings import AttentionAnswer
from annotation.quality.rules import effective_decision

# Bump when the report's computation or shape changes: cached reports then count as stale.
REPORT_VERSION = 4  # 4: the integrity section
DEFAULT_SCALE = list(range(1, 6))


def survey_scale(survey, aspect=Aspect.OVERALL):
    """The values of the survey's scale for `aspect` (1..5 when the survey defines none)."""
    found = Aspect.objects.filter(survey=survey, key=aspect).first()
    return found.values if found else list(DEFAULT_SCALE)


def rating_rows(*, surveys, aspect=Aspect.OVERALL):
    """Ratings of `surveys` on `aspect`, rejected assignments left out, as plain dicts."""
    return list(
        Rating.objects.filter(survey__in=surveys, aspect=aspect)
        .exclude(assignment__status=Assignment.Status.REJECTED)
        .values("survey_id", "annotator_id", "response_id", "score", "seconds")
        .order_by("id")
    )


def annotator_labels(annotator_ids):
    """A readable, unique label per annotator: the worker id, or provider:worker on a clash."""
    rows = list(Annotator.objects.filter(pk__in=annotator_ids).values_list("pk", "provider", "worker_id"))
    counts = {}
    for _pk, _provider, worker in rows:
        counts[worker] = counts.get(worker, 0) + 1
    return {pk: (worker if counts[worker] == 1 else f"{provider}:{worker}") for pk, provider, worker in rows}


def attention_by_annotator(survey):
    """`{annotator_id: (answers, failed)}` over the survey's attention-check answers.

    A pairwise or ACUTE survey's swapped repeats are left out: an inconsistent repeat may be honest doubt
    about a close pair (the submit path does not count it either); the consistency rule judges them.
    """
    result = {}
    rows = (
        AttentionAnswer.objects.filter(assignment__hit__survey=survey)
        .exclude(item__kind__in=(HITItem.Kind.PAIR_REPEAT, HITItem.Kind.CONV_PAIR_REPEAT))
        .values_list("assignment__annotator_id", "passed")
        .order_by()
    )
    for annotator_id, passed in rows:
        total, failed = result.get(annotator_id, (0, 0))
        result[annotator_id] = (total + 1, failed + (0 if passed else 1))
    return result


def attention_by_kind(survey):
    """`{kind: {"total", "failed"}}` per kind of check (gold, instructed)."""
    rows = AttentionAnswer.objects.filter(assignment__hit__survey=survey).values_list("item__kind", "passed").order_by()
    result = {}
    for kind, passed in rows:
        entry = result.setdefault(kind, {"total": 0, "failed": 0})
        entry["total"] += 1
        entry["failed"] += 0 if passed else 1
    return result


def rejected_assignments_by_annotator(survey):
    rows = (
        Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.REJECTED)
        .values("annotator_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {row["annotator_id"]: row["n"] for row in rows}


DECISION_FIELDS = ("id", "survey_id", "annotator_id", "excluded", "reasons", "source", "note", "created_at")


def _decision_rows(decisions):
    """Decisions as plain dicts, oldest first (`values()`: a big survey has thousands)."""
    rows = decisions.order_by("created_at", "id").values(*DECISION_FIELDS, "decided_by__username")
    return [
        {
            **{key: row[key] for key in DECISION_FIELDS},
            "decided_by": row["decided_by__username"],
            "created_at": row["created_at"].isoformat(),
        }
        for row in rows
    ]


def decision_history(*, survey, annotator=None):
    """Every decision of the survey (or of one annotator in it), oldest first, as dicts."""
    decisions = ExclusionDecision.objects.filter(survey=survey)
    if annotator is not None:
        decisions = decisions.filter(annotator=annotator)
    return _decision_rows(decisions)


def effective_decisions(*, surveys):
    """`{(survey_id, annotator_id): decision dict}`: the decision that holds for each annotator."""
    grouped = {}
    for row in _decision_rows(ExclusionDecision.objects.filter(survey__in=surveys)):
        grouped.setdefault((row["survey_id"], row["annotator_id"]), []).append(row)
    return {key: effective_decision(history) for key, history in grouped.items()}


def excluded_annotators(*, surveys):
    """`{survey_id: {annotator_id, ...}}` of annotators whose ratings do not count."""
    result = {}
    for (survey_id, annotator_id), decision in effective_decisions(surveys=surveys).items():
        if decision and decision["excluded"]:
            result.setdefault(survey_id, set()).add(annotator_id)
    return result


def survey_fingerprint(survey):
    """A short summary of everything the survey's quality report depends on.

    Ratings and attention answers are only ever added, so count and highest id detect new
    ones; decisions likewise. Settings and the report version are part of it too.
    """
    ratings = Rating.objects.filter(survey=survey).aggregate(n=Count("id"), last=Max("id"))
    answers = AttentionAnswer.objects.filter(assignment__hit__survey=survey).aggregate(n=Count("id"), last=Max("id"))
    decisions = ExclusionDecision.objects.filter(survey=survey).aggregate(n=Count("id"), last=Max("id"))
    rejected = Assignment.objects.filter(hit__survey=survey, status=Assignment.Status.REJECTED).count()
    parts = [
        REPORT_VERSION,
        ratings["n"],
        ratings["last"],
        answers["n"],
        answers["last"],
        decisions["n"],
        decisions["last"],
        rejected,
        survey.kappa_threshold,
        survey.kappa_weighting,
        survey.min_pair_overlap,
        survey.min_seconds_per_item,
        survey.attention_policy,
        survey.max_position_bias,
        survey.min_position_judgements,
        survey.min_repeat_consistency,
        survey.min_repeats,
        survey.max_pasted_share,
        survey.min_competence,
    ]
    parts += kind_for(survey).fingerprint_parts(survey)  # what else changes the kind's report
    return hashlib.sha1(repr(parts).encode(), usedforsecurity=False).hexdigest()
