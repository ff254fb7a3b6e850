"""Reads shared by several places. Everything a researcher sees is filtered by owner here."""

from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import HIT, Assignment, Dataset, Survey, System
from annotation.pseudonyms import WorkerNames
from annotation.quality.selectors import accepted_ratings

# Reading every study stays a staff right (admins read reports); changing one needs ownership, a
# superuser, or this explicit permission. `is_staff` alone never grants a write.
MANAGE_ANY_STUDY = "annotation.manage_any_study"


def may_change_any_study(user):
    """Whether the user may change every researcher's datasets and surveys (not only their own)."""
    return user.is_active and (user.is_superuser or user.has_perm(MANAGE_ANY_STUDY))


def _may_read_any_study(user):
    return (user.is_active and user.is_staff) or may_change_any_study(user)


def datasets_visible_to(*, user):
    """Datasets a user may read: their own; staff (and those who may change any) read all."""
    queryset = Dataset.objects.annotate(n_contexts=Count("contexts", distinct=True))
    if _may_read_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def datasets_changeable_by(*, user):
    """Datasets a user may change (upload into, survey, score, train on): their own, or all with the right."""
    if may_change_any_study(user):
        return Dataset.objects.all()
    return Dataset.objects.filter(owner=user)


def surveys_visible_to(*, user):
    """Surveys a user may read: their own; staff (and those who may change any) read all."""
    queryset = Survey.objects.select_related("dataset")
    if _may_read_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def surveys_changeable_by(*, user):
    """Surveys a user may change (launch, close, review, override, MTurk actions): their own, or all with the right."""
    queryset = Survey.objects.select_related("dataset")
    if may_change_any_study(user):
        return queryset
    return queryset.filter(owner=user)


def may_see_real_worker_ids(*, user, study):
    """Only a study's owner downloads its workers' real ids (staff and admins get pseudonyms):
    the ids are personal data collected for that researcher's study."""
    return study.owner_id is not None and study.owner_id == user.pk


def worker_names(*, user, study):
    """How researcher pages name the workers of `study` (a dataset or a survey) for `user`: their
    real ids for the study's owner only, as downloads do (`may_see_real_worker_ids`); the dataset's
    pseudonyms (A1, A2, ...) for everyone else who may read it (staff, admins). Every page naming a
    worker goes through this (`{{ annotator|worker_name:worker_names }}`, annotation/templatetags)."""
    if may_see_real_worker_ids(user=user, study=study):
        return WorkerNames()
    return WorkerNames(dataset=study if isinstance(study, Dataset) else study.dataset)


def may_change_study(*, user, study):
    """Whether the user may change this dataset or survey (the check for one object already read)."""
    return study.owner_id == user.pk or may_change_any_study(user)


def human_scores(*, dataset, surveys=None, aspect="overall", apply_exclusions=True):
    """Mean accepted human score per response: `{response_id: (mean, count)}`.

    Every downstream number (correlations, ADEM training data) reads human scores through
    this one function, so exclusions apply everywhere alike. `surveys` limits the surveys
    used (default: every survey of the dataset).
    """
    ratings = accepted_ratings(dataset=dataset, surveys=surveys, aspect=aspect, apply_exclusions=apply_exclusions)
    totals = {}
    for response_id, score in ratings.values_list("response_id", "score").iterator(chunk_size=10_000):
        total, count = totals.get(response_id, (0, 0))
        totals[response_id] = (total + score, count + 1)
    return {response_id: (total / count, count) for response_id, (total, count) in totals.items()}


def dataset_systems(*, dataset):
    """The dataset's systems with their number of responses (`n_responses`)."""
    return System.objects.filter(dataset=dataset).annotate(n_responses=Count("responses")).order_by("name")


def _finished(*, survey_id, annotator_id):
    return Assignment.objects.filter(
        hit__survey_id=survey_id, annotator_id=annotator_id, status__in=Assignment.FINISHED
    )


def survey_for_link(*, token):
    """The survey a shareable link names, or None.

    One read by the unique token, written out: every annotator's arrival starts here, and the
    ORM's query building costs more than the query (`.raw()` still applies the database's value
    converters, so the row reads the same on every backend).
    """
    table = connection.ops.quote_name(Survey._meta.db_table)
    return next(iter(Survey.objects.raw(f"SELECT * FROM {table} WHERE token = %s", [token])), None)


def assignment_for_page(*, token, progress=True):
    """The assignment behind an annotator's link, with its survey and annotator, or None.

    With `progress`, annotated with `hits_done`, how many HITs of the survey its annotator has
    finished (for the page's "HIT n of at most m"), so showing the page needs one query for all
    three. A submission leaves it out: it only shows a page when it is refused (`hits_done`).
    """
    rows = Assignment.objects.select_related("hit__survey", "annotator")
    if progress:
        finished = (
            _finished(survey_id=OuterRef("hit__survey_id"), annotator_id=OuterRef("annotator_id"))
            .order_by()
            .values("annotator_id")
            .annotate(n=Count("pk"))
            .values("n")
        )
        # And how many HITs the survey has: "of at most m" is never more than that (F11).
        hits = HIT.objects.filter(survey_id=OuterRef("hit__survey_id")).order_by().values("survey_id")
        rows = rows.annotate(
            hits_done=Coalesce(Subquery(finished), 0),
            survey_hits=Subquery(hits.annotate(n=Count("pk")).values("n")),
        )
    try:
        # get() drops the models' default ordering, which would join and sort for nothing here.
        return rows.get(token=token)
    except Assignment.DoesNotExist:
        return None


def handed_in_work(*, survey, annotator):
    """Whether the annotator finished at least one HIT of the survey: what earns a completion code."""
    return _finished(survey_id=survey.pk, annotator_id=annotator.pk).exists()


def hits_done(*, assignment):
    """How many HITs of its survey the assignment's annotator has finished."""
    return hits_finished(survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id)


def hits_finished(*, survey_id, annotator_id):
    """How many HITs of the survey the annotator has finished."""
    return _finished(survey_id=survey_id, annotator_id=annotator_id).count()


def work_left_for(*, assignment):
    """Whether the assignment's annotator could take another HIT of its survey (see `open_hit_left`)."""
    return open_hit_left(survey_id=assignment.hit.survey_id, annotator_id=assignment.annotator_id)


def open_hit_left(*, survey_id, annotator_id):
    """Whether the annotator could take another HIT of the survey: an open slot on a HIT they have
    not held (the claim's own rule, services/claims.py `_candidates`)."""
    held = Assignment.objects.filter(hit__survey_id=survey_id, annotator_id=annotator_id)
    return (
        Assignment.objects.filter(hit__survey_id=survey_id, status=Assignment.Status.OPEN)
        .exclude(hit_id__in=held.values("hit_id"))
        .exists()
    )
