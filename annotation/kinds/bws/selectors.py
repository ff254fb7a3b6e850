"""Reads of best-worst judgements for the report: those that count, by the rating studies' rules."""

from annotation.models import BWSJudgement, Response
from annotation.quality.selectors import accepted_answers


def accepted_bws(*, dataset, surveys=None, apply_exclusions=True):
    """Judgements that count (`accepted_answers`: unconfirmed platform work, rejected assignments
    and excluded annotators left out)."""
    rows = BWSJudgement.objects.filter(survey__dataset=dataset)
    return accepted_answers(rows, "bws_judgements", dataset=dataset, surveys=surveys, apply_exclusions=apply_exclusions)


def bws_rows(queryset):
    """`(judgements, systems)`: plain `(context id, item id, [response ids], best, worst)` tuples,
    and `{response id: system name}` for every response they show."""
    rows = list(queryset.order_by("pk").values_list("context_id", "item_id", "responses", "best_id", "worst_id"))
    shown = {pk for row in rows for pk in row[2]}
    systems = dict(Response.with_references.filter(pk__in=shown).values_list("pk", "system__name"))
    return rows, systems


def response_contexts(response_ids):
    """`{response id: context id}`: a set across contexts shows replies to several (survey.bws_across_contexts)."""
    return dict(Response.with_references.filter(pk__in=response_ids).values_list("pk", "context_id"))
