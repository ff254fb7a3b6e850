"""Reads of pairwise judgements shared by analysis, quality control, exports and the LLM judges.

`accepted_judgements` applies the rating studies' rules: work its crowd platform has not confirmed
is left out, and with `apply_exclusions` so are rejected assignments and annotators excluded from
the survey (automatic rules or a researcher's override, `ExclusionDecision`).
"""

from annotation.models import PairwiseJudgement, Survey
from annotation.quality.selectors import accepted_answers


def pairwise_surveys(*, dataset):
    """The dataset's surveys that hold pairwise judgements (collected or imported)."""
    return Survey.objects.filter(dataset=dataset, pairwise_judgements__isnull=False).distinct().order_by("pk")


def accepted_judgements(*, dataset, surveys=None, aspect="overall", apply_exclusions=True):
    """Judgements that count, by the rating studies' rules (`accepted_answers`): stale quality
    reports of the surveys are brought up to date first, as for ratings."""
    rows = PairwiseJudgement.objects.filter(survey__dataset=dataset, aspect=aspect)
    return accepted_answers(
        rows, "pairwise_judgements", dataset=dataset, surveys=surveys, apply_exclusions=apply_exclusions
    )


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
