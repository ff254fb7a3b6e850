"""Whether a cached report is still current: short hashes of everything it depends on.

A full fingerprint (`report_input_parts`, the accepted sets included) for the periodic check and
the Refresh button, and a cheaper change marker (`report_change_marker`) a page can afford on every
view. Both are cheap aggregate queries, never a computation of the report itself.

Both also hold the version of the code that computes a report (`report_code_version`), so a
report cached before an upgrade that changes a figure's computation is recomputed, instead of
Refresh saying "up to date" over figures the new code would not give.
"""

import hashlib
import json
from functools import cache
from pathlib import Path

from django.db.models import Count, Max, Sum

from annotation.kinds.bws.selectors import accepted_bws
from annotation.kinds.pairwise.selectors import accepted_judgements
from annotation.kinds.registry import task_types_reporting
from annotation.models import (
    Assignment,
    BWSJudgement,
    ConversationJudgement,
    ConversationRating,
    ExclusionDecision,
    PairwiseJudgement,
    Rating,
    Response,
    Survey,
)
from annotation.quality.selectors import accepted_ratings
from scoring.judges import prompts
from scoring.models import ConversationMetricScore, JudgeCacheEntry, MetricScore, TurnMetricScore


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


# The analysis packages whose code turns the inputs into a report's figures. Code elsewhere that
# a report reads through (exclusions, accepted sets, scores) changes the inputs hashed below.
REPORT_CODE = ("report", "sections", "stats", "services")


def code_version_of(root, packages):
    """A short hash of every .py file under `root`/`package` for each package: paths and contents."""
    digest = hashlib.sha256()
    for path in sorted(p for package in packages for p in (Path(root) / package).rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@cache  # the code does not change while a process runs
def report_code_version():
    """The version of the code that computes reports."""
    return code_version_of(Path(__file__).resolve().parent.parent, REPORT_CODE)


def report_input_parts(*, dataset, survey=None, aspect="overall", apply_exclusions=True, **_ignored):
    """Short hashes of what a report depends on, one per kind of input, for people to compare:
    `ratings` (count, newest id), `accepted` (the accepted set: count and id sum, so it changes
    whenever an exclusion decision does), `scores` (count, newest computation, sum of values) and
    `pairwise` (judgements, their exclusion decisions, pairwise LLM judges' answers; see
    `_pairwise_marker`), and `code` (`report_code_version`). Cheap aggregate queries, so pages
    and exports can check staleness.
    """
    survey_ids = [survey.pk] if survey is not None else list(dataset.surveys.values_list("pk", flat=True))
    surveys = [survey] if survey is not None else None
    # Filters on ids rather than joins, so SQLite and PostgreSQL answer from the indexes
    # (rating: survey+aspect; metric score: response+metric) instead of scanning joins.
    ratings = Rating.objects.filter(survey_id__in=survey_ids, aspect=aspect)
    # Both bring their surveys' stale quality reports up to date first, so the exclusion decisions
    # read below are the ones the report itself will use.
    accepted = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    accepted_pairs = accepted_judgements(
        dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions
    )
    responses = Response.objects.filter(context__dataset=dataset).values("pk")
    scores = MetricScore.objects.filter(response_id__in=responses)
    parts = {
        "ratings": ratings.aggregate(n=Count("pk"), last=Max("pk")),
        "accepted": accepted.aggregate(n=Count("pk"), ids=Sum("pk")),
        # The sum of values too: a queryset .update() of values leaves computed_at (auto_now) alone.
        "scores": scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
        "pairwise": _pairwise_marker(dataset, survey_ids),
        "conversations": _conversation_marker(dataset),
        "code": report_code_version(),
    }
    if parts["pairwise"] is not None:
        # the accepted judgements, as for ratings: a platform's confirmation changes them too
        parts["pairwise_accepted"] = accepted_pairs.aggregate(n=Count("pk"), ids=Sum("pk"))
    bws = _bws_marker(survey_ids)
    if bws is not None:  # only where there are any: the fingerprints of other reports stay as they were
        accepted_bws_rows = accepted_bws(dataset=dataset, surveys=surveys, apply_exclusions=apply_exclusions)
        parts["bws"] = {**bws, "accepted": accepted_bws_rows.aggregate(n=Count("pk"), ids=Sum("pk"))}
    return {name: _digest(value)[:8] for name, value in parts.items()}


def _bws_marker(survey_ids):
    """What the best-worst section reads beside scores: its judgements (only ever added) and their
    surveys' exclusion decisions; None where there are none."""
    judgements = BWSJudgement.objects.filter(survey_id__in=survey_ids).aggregate(n=Count("pk"), last=Max("pk"))
    if not judgements["n"]:
        return None
    decisions = ExclusionDecision.objects.filter(survey__bws_judgements__isnull=False, survey_id__in=survey_ids)
    return {"judgements": judgements, "decisions": decisions.distinct().aggregate(n=Count("pk"), last=Max("pk"))}


def _pairwise_marker(dataset, survey_ids):
    """What the pairwise section reads beside ratings and scores: the judgements (only ever
    added), their surveys' exclusion decisions (an override adds one), and the answers of the
    owner's pairwise LLM judges. Those answers live in the judge cache, not in metric scores, so
    judging pairs makes the report stale here, as computing a metric does through `scores`.
    The cache is the owner's, not the dataset's (it is keyed by prompt): judging another
    dataset's pairs also reads as a change, which costs one recompute, never a stale figure.
    """
    judgements = PairwiseJudgement.objects.filter(survey_id__in=survey_ids).aggregate(n=Count("pk"), last=Max("pk"))
    if not judgements["n"]:
        return None  # a rating study: nothing here can change its report
    pairwise_surveys = Survey.objects.filter(pk__in=survey_ids, task_type__in=task_types_reporting("pairwise"))
    decisions = ExclusionDecision.objects.filter(survey__in=pairwise_surveys)
    verdicts = JudgeCacheEntry.objects.filter(judge__owner_id=dataset.owner_id, judge__template=prompts.PAIRWISE)
    return {
        "judgements": judgements,
        "decisions": decisions.aggregate(n=Count("pk"), last=Max("pk")),
        "judge_answers": verdicts.aggregate(n=Count("pk"), last=Max("pk")),
    }


def _conversation_marker(dataset):
    """What the Conversations section reads: the conversation ratings and comparisons (only ever
    added), the stored conversation and turn metric scores (replaced by a run: their newest time
    and sum), and the exclusion decisions and rejections of the surveys that collected them."""
    if not dataset.conversations.exists():
        return None  # no conversations: nothing here can change the report
    ratings = ConversationRating.objects.filter(conversation__dataset=dataset)
    judgements = ConversationJudgement.objects.filter(conversation_a__dataset=dataset)
    scores = ConversationMetricScore.objects.filter(conversation__dataset=dataset)
    turn_scores = TurnMetricScore.objects.filter(turn__conversation__dataset=dataset)
    surveys = dataset.surveys.filter(task_type__in=task_types_reporting("conversations"))
    rejected = Assignment.objects.filter(hit__survey__in=surveys, status=Assignment.Status.REJECTED)
    return {
        "turn_scores": turn_scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
        "decisions": ExclusionDecision.objects.filter(survey__in=surveys).aggregate(n=Count("pk"), last=Max("pk")),
        "rejected": rejected.count(),
        "conversations": dataset.conversations.aggregate(n=Count("pk"), last=Max("pk")),
        "ratings": ratings.aggregate(n=Count("pk"), last=Max("pk")),
        "judgements": judgements.aggregate(n=Count("pk"), last=Max("pk")),
        "scores": scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
    }


def report_change_marker(*, dataset, survey=None, aspect="overall", **_ignored):
    """A cheaper stand-in for the fingerprint that a page can afford on every view: the newest
    rating, exclusion decision (an override adds one) and rejected assignment, the metric
    scores' count, newest and sum, and the pairwise inputs (`_pairwise_marker`). It changes
    whenever the fingerprint does in practice, without reading the quality report that
    `accepted_ratings` needs (MTurk confirmations, which also change the accepted set, are left
    to the periodic fingerprint check)."""
    survey_ids = [survey.pk] if survey is not None else list(dataset.surveys.values_list("pk", flat=True))
    responses = Response.objects.filter(context__dataset=dataset).values("pk")
    ratings = Rating.objects.filter(survey_id__in=survey_ids, aspect=aspect)
    decisions = ExclusionDecision.objects.filter(survey_id__in=survey_ids)
    rejected = Assignment.objects.filter(hit__survey_id__in=survey_ids, status=Assignment.Status.REJECTED)
    scores = MetricScore.objects.filter(response_id__in=responses)
    marker = {
        "ratings": ratings.aggregate(n=Count("pk"), last=Max("pk")),
        "decisions": decisions.aggregate(n=Count("pk"), last=Max("pk")),
        "rejected": rejected.aggregate(n=Count("pk"), ids=Sum("pk")),
        "scores": scores.aggregate(n=Count("pk"), last=Max("computed_at"), total=Sum("value")),
        "pairwise": _pairwise_marker(dataset, survey_ids),
        "conversations": _conversation_marker(dataset),
        "code": report_code_version(),
    }
    bws = _bws_marker(survey_ids)
    if bws is not None:
        marker["bws"] = bws
    return _digest(marker)[:16]


def fingerprint_of(parts):
    return _digest(parts)


def report_fingerprint(**inputs):
    """One hash of every input (see `report_input_parts`); a different one means a stale report."""
    return fingerprint_of(report_input_parts(**inputs))
