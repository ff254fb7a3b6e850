"""Reads for the researcher's survey pages and the survey_status command."""

from django.db.models import Avg, Count, F, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from annotation.kinds.registry import kind_for
from annotation.models import (
    HIT,
    Annotator,
    Assignment,
    PairwiseJudgement,
    Rating,
    ReviewAction,
    Survey,
    WrittenResponse,
)
from annotation.services.reviews import annotators_excluded


def _answers_per_annotator(survey):
    """`{annotator id: {"n", "seconds"}}` of the survey's answers: its kind's (ratings, a pairwise
    survey's judgements, a conversation survey's ratings...) or a write survey's written replies
    (which reach the survey through their assignment)."""
    if survey.task_type == "write":
        written = WrittenResponse.objects.filter(assignment__hit__survey=survey)
        rows = written.values(annotator=F("assignment__annotator"))
    else:
        rows = kind_for(survey).answer_model().objects.filter(survey=survey).values("annotator")
    return {row["annotator"]: row for row in rows.annotate(n=Count("pk"), seconds=Avg("seconds")).order_by()}


def survey_progress(*, survey):
    """Live numbers: HITs complete, assignments by status, annotators, flagged work, ratings."""
    by_status = dict(
        Assignment.objects.filter(hit__survey=survey)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    hits = HIT.objects.filter(survey=survey).annotate(
        # a rejected slot another took over (Prolific re-offers its place) leaves the HIT unfinished
        n_done=Count("assignments", filter=Q(assignments__status__in=Assignment.FINISHED, assignments__replaced=False))
    )
    hits_total = hits.count()
    hits_done = hits.filter(n_done__gte=survey.assignments_per_hit).count()
    answers = _answers_per_annotator(survey)
    return {
        "hits_total": hits_total,
        "hits_done": hits_done,
        "assignments_total": sum(by_status.values()),
        "assignments": {status: by_status.get(status, 0) for status in Assignment.Status.values},
        "assignments_done": sum(by_status.get(s, 0) for s in Assignment.FINISHED),
        "annotators": Assignment.objects.filter(hit__survey=survey, annotator__isnull=False)
        .values("annotator")
        .distinct()
        .count(),
        "flagged": Assignment.objects.filter(hit__survey=survey, flagged=True).count(),
        # The survey's answers: ratings, judgements (pairwise) or written replies (write).
        "ratings": sum(row["n"] for row in answers.values()),
        # who gave them: also an imported survey's workers, who hold no assignment
        "answering": len(answers),
        "excluded": len(annotators_excluded(survey=survey)),
        "written_pending": WrittenResponse.objects.filter(assignment__hit__survey=survey, status="pending").count(),
    }


def survey_annotators(*, survey):
    """One row per annotator: HITs done, ratings (a pairwise survey's judgements, a write survey's
    written replies), flagged work, mean seconds, excluded or not."""
    excluded = annotators_excluded(survey=survey)
    rows = (
        Annotator.objects.filter(assignments__hit__survey=survey)
        .annotate(
            hits=Count(
                "assignments",
                filter=Q(assignments__hit__survey=survey, assignments__status__in=Assignment.FINISHED),
                distinct=True,
            ),
            flagged=Count(
                "assignments", filter=Q(assignments__hit__survey=survey, assignments__flagged=True), distinct=True
            ),
            # MTurk work that MTurk has not confirmed yet (see annotation/crowd/mturk/sync.py).
            unconfirmed=Count(
                "assignments",
                filter=Q(assignments__hit__survey=survey, assignments__status__in=Assignment.FINISHED)
                & (Q(assignments__mturk__isnull=True) | Q(assignments__mturk__confirmed=False)),
                distinct=True,
            ),
        )
        .distinct()
        .order_by("worker_id")
    )
    stats = _answers_per_annotator(survey)
    result = []
    for annotator in rows:
        row = stats.get(annotator.pk, {})
        result.append(
            {
                "annotator": annotator,
                "hits": annotator.hits,
                "flagged": annotator.flagged,
                "ratings": row.get("n", 0),
                "mean_seconds": row.get("seconds"),
                "excluded": annotator.pk in excluded,
                "unconfirmed": annotator.unconfirmed if survey.provider == "mturk" else 0,
            }
        )
    return result


def annotator_work(*, survey, annotator):
    """The annotator's assignments in the survey (answers and attention checks of each), the review
    trail and the exclusion decision. `n_ratings` counts a pairwise survey's judgements and a write
    survey's written replies."""
    answers = {"pairwise": "pairwise_judgements", "write": "written_responses"}.get(survey.task_type, "ratings")
    assignments = (
        Assignment.objects.filter(hit__survey=survey, annotator=annotator)
        .select_related("hit", "mturk")
        .annotate(
            n_ratings=Count(answers, distinct=True),
            checks_failed=Count("attention_answers", filter=Q(attention_answers__passed=False), distinct=True),
            checks_total=Count("attention_answers", distinct=True),
        )
        .order_by("hit__position")
    )
    trail = ReviewAction.objects.filter(Q(survey=survey) | Q(survey=None), annotator=annotator).select_related("actor")
    assignments = list(assignments)
    return {
        "assignments": assignments,
        # MTurk work MTurk has not confirmed yet counts in no analysis (annotation/crowd/mturk/sync.py).
        "unconfirmed": sum(
            1
            for a in assignments
            if survey.provider == "mturk"
            and a.status in Assignment.FINISHED
            and not getattr(getattr(a, "mturk", None), "confirmed", False)
        ),
        "trail": list(trail),
        "excluded": annotator.pk in annotators_excluded(survey=survey),
    }


def surveys_with_progress(surveys):
    """The survey list's progress column: HITs and finished assignments of each survey, in one query."""
    hits = HIT.objects.filter(survey=OuterRef("pk")).order_by().values("survey").annotate(n=Count("pk")).values("n")
    finished = (
        Assignment.objects.filter(hit__survey=OuterRef("pk"), status__in=Assignment.FINISHED)
        .order_by()
        .values("hit__survey")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows = surveys.annotate(
        n_hits=Coalesce(Subquery(hits[:1], output_field=IntegerField()), 0),
        n_finished=Coalesce(Subquery(finished[:1], output_field=IntegerField()), 0),
    )
    rows = list(rows)
    for survey in rows:
        survey.n_wanted = survey.n_hits * survey.assignments_per_hit
        survey.percent_done = round(100 * survey.n_finished / survey.n_wanted) if survey.n_wanted else 0
    _count_imported_answers([survey for survey in rows if survey.provider == Survey.Provider.IMPORTED])
    return rows


def _count_imported_answers(imported):
    """`n_answers` and `n_raters` of each imported survey, which has no HITs to count: one query per
    kind of answer (ratings, pairwise judgements), however many surveys. Only imported surveys are
    counted, so a list of large collected surveys reads no answers."""
    for survey in imported:
        survey.n_answers = survey.n_raters = 0
    by_pk = {survey.pk: survey for survey in imported}
    for answers, task_types in ((Rating, {"rate"}), (PairwiseJudgement, {"pairwise"})):
        pks = [pk for pk, survey in by_pk.items() if survey.task_type in task_types]
        if not pks:
            continue
        rows = (
            answers.objects.filter(survey__in=pks)
            .order_by()
            .values("survey")
            .annotate(n=Count("pk"), raters=Count("annotator", distinct=True))
        )
        for row in rows:
            by_pk[row["survey"]].n_answers, by_pk[row["survey"]].n_raters = row["n"], row["raters"]
