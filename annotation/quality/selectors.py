"""Quality control reads: the accepted ratings, the agreement summary and the cached report."""

from datetime import datetime
from functools import reduce
from operator import or_

from django.core.cache import cache
from django.db.models import Exists, OuterRef, Q

from annotation.models import Assignment, LinkParticipant, ProlificSubmission, QualityReport, Rating, Survey
from annotation.quality import data, report
from annotation.quality.recompute import quality_recompute

AGREEMENT_KEYS = ("pairs", "annotators", "median_kappa", "alpha", "split_half")


# Crowd platforms whose worker ids arrive in a URL anyone can type: their work counts only once the
# platform itself lists it.
CONFIRMED_BY_PLATFORM = ("mturk", "prolific", "link")


def unconfirmed_platform_work(*, survey="survey", annotator="annotator", assignment="assignment"):
    """A filter for ratings of crowd-platform work that its platform has not confirmed (yet).

    MTurk: sync saw MTurk list the same assignment id and worker id. Prolific: Prolific listed the
    participant's session in the study. Link-and-code platforms: the researcher confirmed the ids
    the platform lists as completed. One rule for analysis (which leaves such work out), exports
    (which mark it) and the review of written replies (which accepts none of it). The keyword
    arguments are the paths from the filtered rows to their survey, annotator and assignment
    (a written reply reaches its survey through `assignment__hit__survey`)."""
    confirmed_on_prolific = ProlificSubmission.objects.filter(
        study__survey_id=OuterRef(f"{survey}_id"), annotator_id=OuterRef(f"{annotator}_id"), confirmed=True
    )
    confirmed_on_platform = LinkParticipant.objects.filter(
        survey_id=OuterRef(f"{survey}_id"), annotator_id=OuterRef(f"{annotator}_id"), confirmed=True
    )
    return (
        (Q(**{f"{survey}__provider": "mturk"}) & ~Q(**{f"{assignment}__mturk__confirmed": True}))
        | (Q(**{f"{survey}__provider": "prolific"}) & ~Exists(confirmed_on_prolific))
        | (Q(**{f"{survey}__provider": "link"}) & ~Exists(confirmed_on_platform))
    )


def accepted_ratings(*, dataset, surveys=None, aspect="overall", apply_exclusions=True):
    """Ratings that count: of the dataset's surveys (or `surveys`), on `aspect` (see `accepted_answers`)."""
    ratings = Rating.objects.filter(survey__dataset=dataset, aspect=aspect)
    return accepted_answers(ratings, "ratings", dataset=dataset, surveys=surveys, apply_exclusions=apply_exclusions)


def accepted_answers(rows, related_name, *, dataset, surveys=None, apply_exclusions=True):
    """The answers among `rows` (a dataset's ratings or pairwise judgements on one aspect; their
    surveys reach them as `related_name`) that count, in the dataset's surveys or in `surveys`.

    Work its crowd platform has not confirmed never counts. With `apply_exclusions`, answers of
    rejected assignments and of annotators excluded from a survey (by the rules or a researcher;
    see `ExclusionDecision`) are left out too. Exclusion is per survey: the same annotator's
    answers in another survey still count there.

    The automatic decisions are brought up to date first: a survey whose quality report is stale
    (answers arrived since) is recomputed now, so every downstream number uses the exclusions its
    answers call for, with or without a Celery worker having caught up.
    """
    if surveys is not None:
        rows = rows.filter(survey__in=surveys)
    rows = rows.exclude(unconfirmed_platform_work())
    if not apply_exclusions:
        return rows
    rows = rows.exclude(assignment__status=Assignment.Status.REJECTED)
    scope = Survey.objects.filter(dataset=dataset)
    if surveys is not None:
        scope = scope.filter(pk__in=[getattr(s, "pk", s) for s in surveys])
    for survey in scope.filter(**{f"{related_name}__isnull": False}).distinct():
        survey_quality(survey=survey)
    excluded = data.excluded_annotators(surveys=scope)
    if excluded:
        rows = rows.exclude(
            reduce(or_, (Q(survey_id=sid, annotator_id__in=ids) for sid, ids in sorted(excluded.items())))
        )
    return rows


def recompute_key(survey_id):
    """The cache key that debounces a survey's recompute; it holds when that recompute was queued."""
    return f"ratelab:quality:queued:{survey_id}"


def recomputes_queued(*, survey_ids):
    """`{survey id: when queued}` of the surveys whose debounced recompute is queued and not yet due,
    read from the debounce keys (no query). The time is None for a key written before it held one.

    The pages say so: for the debounce's ~30 s they show the report as it was before the change
    that queued the recompute (a researcher's exclusion, new work)."""
    keys = {recompute_key(pk): pk for pk in survey_ids}
    return {keys[key]: value if isinstance(value, datetime) else None for key, value in cache.get_many(keys).items()}


def report_is_fresh(cached):
    return cached is not None and cached.fingerprint == data.survey_fingerprint(cached.survey)


def cached_report(*, survey):
    """`(report dict or None, fresh)`: what the pages show, without computing anything."""
    cached = QualityReport.objects.filter(survey=survey).select_related("survey").first()
    if cached is None or not cached.data:
        return None, False
    return cached.data, report_is_fresh(cached)


def survey_quality(*, survey):
    """The survey's full quality report: the cached one when fresh, else recomputed now.

    For batch callers (the analysis report, commands). Pages use `cached_report` and never
    compute in the request.
    """
    content, fresh = cached_report(survey=survey)
    if fresh:
        return content
    return quality_recompute(survey=survey).data


def _agreement(content):
    result = {key: content.get(key) for key in AGREEMENT_KEYS}
    for extra in ("median_kappa_accepted", "alpha_all", "kappa_histogram", "n_ratings", "n_accepted_ratings"):
        if extra in content:
            result[extra] = content[extra]
    return result


def agreement_summary(*, survey=None, dataset=None):
    """The report's "agreement" object for a survey, or for all rated surveys of a dataset.

    `{"pairs": [{"a", "b", "n", "kappa", "kappa_linear", "kappa_quadratic", "used"}],
    "annotators": [{"worker", "kappa", "excluded", "reasons", ...}], "median_kappa", "alpha",
    "split_half": {"pearson": {"mean", "std"}, "spearman": {...}, "n_splits", "mode", ...}}`
    plus `median_kappa_accepted`, `alpha_all` (before exclusions) and `kappa_histogram`.
    `alpha` and `split_half` use the accepted ratings; pairs and annotator kappas all ratings
    (they decide the exclusions). A survey's cached report is used when fresh; a stale one is
    recomputed (which also records changed automatic decisions, so `human_scores` agrees).
    Given both, the survey is summarised (it must belong to the dataset).
    """
    if survey is None and dataset is None:
        raise ValueError("give survey= or dataset=")
    if survey is not None and dataset is not None and survey.dataset_id != dataset.pk:
        raise ValueError(f"survey {survey.name} is not a survey of dataset {dataset.name}")
    if survey is not None:
        return _agreement(survey_quality(survey=survey))
    surveys = list(
        Survey.objects.filter(dataset=dataset, ratings__isnull=False).distinct().order_by("created_at", "id")
    )
    if len(surveys) == 1:
        return {**_agreement(survey_quality(survey=surveys[0])), "surveys": [surveys[0].name]}
    # Each survey's own report first: that also brings its stored decisions up to date.
    reports = [survey_quality(survey=each) for each in surveys]
    return _agreement(report.dataset_report(surveys, reports)) | {"surveys": [s.name for s in surveys]}
