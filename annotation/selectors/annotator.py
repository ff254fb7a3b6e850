"""The annotator's side: the survey behind a link, the assignment behind a page, and the work left."""

from django.db import connection
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from annotation.models import HIT, Assignment, Survey


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
