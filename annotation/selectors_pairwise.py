"""Reads of pairwise judgements shared by analysis, quality control, exports and the LLM judges.

`accepted_judgements` applies the rating studies' rules: work its crowd platform has not confirmed
is left out, and with `apply_exclusions` so are rejected assignments and annotators excluded from
the survey (automatic rules or a researcher's override, `ExclusionDecision`).
"""

from functools import reduce
from operator import or_

from django.db.models import Q

from annotation.models import Assignment, PairwiseJudgement, Survey
from annotation.quality import data
from annotation.quality.selectors import unconfirmed_platform_work


def pairwise_surveys(*, dataset):
    """The dataset's surveys that hold pairwise judgements (collected or imported)."""
    return Survey.objects.filter(dataset=dataset, pairwise_judgements__isnull=False).distinct().order_by("pk")


def accepted_judgements(*, dataset, surveys=None, aspect="overall", apply_exclusions=True):
    rows = PairwiseJudgement.objects.filter(survey__dataset=dataset, aspect=aspect)
    if surveys is not None:
        rows = rows.filter(survey__in=surveys)
    rows = rows.exclude(unconfirmed_platform_work())
    if not apply_exclusions:
        return rows
    rows = rows.exclude(assignment__status=Assignment.Status.REJECTED)
    scope = Survey.objects.filter(dataset=dataset)
    if surveys is not None:
        scope = scope.filter(pk__in=[getattr(s, "pk", s) for s in surveys])
    excluded = data.excluded_annotators(surveys=scope)
    if excluded:
        rows = rows.exclude(
            reduce(or_, (Q(survey_id=sid, annotator_id__in=ids) for sid, ids in sorted(excluded.items())))
        )
    return rows


def judgement_rows(queryset):
    """Plain tuples for the statistics: (context, system a, system b, response a, response b,
    winner, annotator, position known)."""
    return list(
        queryset.order_by("pk").values_list(
            "context_id",
            "response_a__system__name",
            "response_b__system__name",
            "response_a_id",
            "response_b_id",
            "winner",
            "annotator_id",
            "position_known",
        )
    )


def judged_pairs(*, dataset, surveys=None, aspect="overall", apply_exclusions=True):
    """Every accepted human-judged pair of the dataset, for judging it again (LLM judges):
    `[{"context_id", "context", "response_a", "response_b", "system_a", "system_b", "winner",
    "worker"}]` with the texts, the context's turns and the human's choice (`a`, `b` or `tie`)."""
    rows = accepted_judgements(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    rows = rows.select_related("context", "response_a__system", "response_b__system", "annotator").order_by("pk")
    return [
        {
            "context_id": row.context.external_id,
            "context": row.context.turns,
            "response_a": row.response_a.text,
            "response_b": row.response_b.text,
            "system_a": row.response_a.system.name,
            "system_b": row.response_b.system.name,
            "response_a_id": row.response_a_id,
            "response_b_id": row.response_b_id,
            "winner": row.winner,
            "worker": row.annotator.worker_id,
        }
        for row in rows
    ]
